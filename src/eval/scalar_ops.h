// Per-element semantics of XLA's elementwise opcodes, templated on the C++
// element type (internal to src/eval).
#ifndef HLOGYM_EVAL_SCALAR_OPS_H_
#define HLOGYM_EVAL_SCALAR_OPS_H_

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "eval/value.h"
#include "hlo/attributes.h"
#include "hlo/opcode.h"

namespace hlogym::eval {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;

// Which binary opcodes apply to element type T.
template <typename T>
constexpr bool BinaryApplies(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
      return true;
    case Opcode::kPower:
      return !kIsPred<T>;
    case Opcode::kRemainder:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return !kIsComplex<T>;
    case Opcode::kAtan2:
      return kIsFloat<T> || kIsComplex<T>;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return kIsInt<T> || kIsPred<T>;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      return kIsInt<T>;
    default:
      return false;
  }
}

template <typename T>
inline T IntPower(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  using U = Unsigned<T>;
  U result = 1, b = static_cast<U>(base);
  U e = static_cast<U>(exponent);
  while (e != 0) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
inline T MulHi(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>((static_cast<__int128>(a) * b) >> 64);
    } else {
      return static_cast<T>((static_cast<unsigned __int128>(a) * b) >> 64);
    }
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (8 * sizeof(T)));
  }
}

template <typename T>
inline T BinaryOp(Opcode op, T a, T b) {
  if constexpr (kIsPred<T>) {
    switch (op) {
      case Opcode::kAdd:
      case Opcode::kOr:
      case Opcode::kMaximum:
        return a || b;
      case Opcode::kMultiply:
      case Opcode::kAnd:
      case Opcode::kMinimum:
        return a && b;
      case Opcode::kSubtract:
      case Opcode::kXor:
        return a != b;
      case Opcode::kDivide:
        return a;
      case Opcode::kRemainder:
        return false;
      default:
        return false;
    }
  } else if constexpr (kIsInt<T>) {
    using U = Unsigned<T>;
    constexpr int kBits = 8 * sizeof(T);
    switch (op) {
      case Opcode::kAdd:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case Opcode::kSubtract:
        return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      case Opcode::kMultiply:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case Opcode::kDivide:
        if (b == 0) return static_cast<T>(-1);
        if constexpr (std::is_signed_v<T>) {
          if (a == std::numeric_limits<T>::min() && b == -1) return a;
        }
        return static_cast<T>(a / b);
      case Opcode::kRemainder:
        if (b == 0) return a;
        if constexpr (std::is_signed_v<T>) {
          if (b == -1) return 0;
        }
        return static_cast<T>(a % b);
      case Opcode::kPower:
        return IntPower(a, b);
      case Opcode::kMaximum:
        return a > b ? a : b;
      case Opcode::kMinimum:
        return a < b ? a : b;
      case Opcode::kAnd:
        return static_cast<T>(a & b);
      case Opcode::kOr:
        return static_cast<T>(a | b);
      case Opcode::kXor:
        return static_cast<T>(a ^ b);
      case Opcode::kShiftLeft:
        if (static_cast<U>(b) >= static_cast<U>(kBits)) return 0;
        return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
      case Opcode::kShiftRightLogical:
        if (static_cast<U>(b) >= static_cast<U>(kBits)) return 0;
        return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
      case Opcode::kShiftRightArithmetic: {
        using S = std::make_signed_t<T>;
        const S sa = static_cast<S>(a);
        if (static_cast<U>(b) >= static_cast<U>(kBits))
          return static_cast<T>(sa < 0 ? S(-1) : S(0));
        return static_cast<T>(static_cast<S>(sa >> static_cast<U>(b)));
      }
      case Opcode::kMulhi:
        return MulHi(a, b);
      default:
        return 0;
    }
  } else if constexpr (kIsFloat<T>) {
    using W = Wide<T>;
    const W x = static_cast<W>(a), y = static_cast<W>(b);
    W r;
    switch (op) {
      case Opcode::kAdd:
        r = x + y;
        break;
      case Opcode::kSubtract:
        r = x - y;
        break;
      case Opcode::kMultiply:
        r = x * y;
        break;
      case Opcode::kDivide:
        r = x / y;
        break;
      case Opcode::kRemainder:
        r = std::fmod(x, y);
        break;
      case Opcode::kPower:
        r = std::pow(x, y);
        break;
      case Opcode::kAtan2:
        r = std::atan2(x, y);
        break;
      case Opcode::kMaximum:
        if (std::isnan(x)) return a;
        if (std::isnan(y)) return b;
        return x > y ? a : (x < y ? b : (std::signbit(x) ? b : a));
      case Opcode::kMinimum:
        if (std::isnan(x)) return a;
        if (std::isnan(y)) return b;
        return x < y ? a : (x > y ? b : (std::signbit(x) ? a : b));
      default:
        r = 0;
        break;
    }
    return static_cast<T>(r);
  } else if constexpr (kIsComplex<T>) {
    switch (op) {
      case Opcode::kAdd:
        return a + b;
      case Opcode::kSubtract:
        return a - b;
      case Opcode::kMultiply:
        return a * b;
      case Opcode::kDivide:
        return a / b;
      case Opcode::kPower:
        return std::pow(a, b);
      default:
        return T(0);
    }
  } else {
    return a;
  }
}

// Which unary opcodes (with the same input and output type) apply to T.
template <typename T>
constexpr bool UnaryApplies(Opcode op) {
  switch (op) {
    case Opcode::kNegate:
      return !kIsPred<T>;
    case Opcode::kAbs:
    case Opcode::kSign:
      return !kIsPred<T> && !kIsComplex<T>;
    case Opcode::kNot:
      return kIsInt<T> || kIsPred<T>;
    case Opcode::kPopulationCount:
    case Opcode::kClz:
      return kIsInt<T>;
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kErf:
    case Opcode::kCbrt:
      return kIsFloat<T>;
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kTanh:
    case Opcode::kSin:
    case Opcode::kCos:
    case Opcode::kTan:
    case Opcode::kAtan:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
      return kIsFloat<T> || kIsComplex<T>;
    default:
      return false;
  }
}

template <typename T>
inline T UnaryOp(Opcode op, T a) {
  if constexpr (kIsPred<T>) {
    return op == Opcode::kNot ? !a : a;
  } else if constexpr (kIsInt<T>) {
    using U = Unsigned<T>;
    switch (op) {
      case Opcode::kNegate:
        return static_cast<T>(U(0) - static_cast<U>(a));
      case Opcode::kAbs:
        if constexpr (std::is_signed_v<T>) {
          return a < 0 ? static_cast<T>(U(0) - static_cast<U>(a)) : a;
        } else {
          return a;
        }
      case Opcode::kSign:
        if constexpr (std::is_signed_v<T>)
          return a < 0 ? T(-1) : (a > 0 ? T(1) : T(0));
        else
          return a > 0 ? T(1) : T(0);
      case Opcode::kNot:
        return static_cast<T>(~a);
      case Opcode::kPopulationCount:
        return static_cast<T>(std::popcount(static_cast<U>(a)));
      case Opcode::kClz:
        return static_cast<T>(std::countl_zero(static_cast<U>(a)));
      default:
        return a;
    }
  } else if constexpr (kIsFloat<T>) {
    using W = Wide<T>;
    const W x = static_cast<W>(a);
    W r;
    switch (op) {
      case Opcode::kNegate:
        r = -x;
        break;
      case Opcode::kAbs:
        r = std::fabs(x);
        break;
      case Opcode::kSign:
        r = std::isnan(x) ? x : (x > 0 ? W(1) : (x < 0 ? W(-1) : x));
        break;
      case Opcode::kFloor:
        r = std::floor(x);
        break;
      case Opcode::kCeil:
        r = std::ceil(x);
        break;
      case Opcode::kRoundNearestAfz:
        r = std::round(x);
        break;
      case Opcode::kRoundNearestEven:
        r = std::nearbyint(x);
        break;
      case Opcode::kExp:
        r = std::exp(x);
        break;
      case Opcode::kExpm1:
        r = std::expm1(x);
        break;
      case Opcode::kLog:
        r = std::log(x);
        break;
      case Opcode::kLog1p:
        r = std::log1p(x);
        break;
      case Opcode::kLogistic:
        r = W(1) / (W(1) + std::exp(-x));
        break;
      case Opcode::kSqrt:
        r = std::sqrt(x);
        break;
      case Opcode::kRsqrt:
        r = W(1) / std::sqrt(x);
        break;
      case Opcode::kCbrt:
        r = std::cbrt(x);
        break;
      case Opcode::kTanh:
        r = std::tanh(x);
        break;
      case Opcode::kSin:
        r = std::sin(x);
        break;
      case Opcode::kCos:
        r = std::cos(x);
        break;
      case Opcode::kTan:
        r = std::tan(x);
        break;
      case Opcode::kAtan:
        r = std::atan(x);
        break;
      case Opcode::kAcos:
        r = std::acos(x);
        break;
      case Opcode::kAcosh:
        r = std::acosh(x);
        break;
      case Opcode::kAsin:
        r = std::asin(x);
        break;
      case Opcode::kAsinh:
        r = std::asinh(x);
        break;
      case Opcode::kAtanh:
        r = std::atanh(x);
        break;
      case Opcode::kCosh:
        r = std::cosh(x);
        break;
      case Opcode::kSinh:
        r = std::sinh(x);
        break;
      case Opcode::kErf:
        r = std::erf(x);
        break;
      default:
        r = x;
        break;
    }
    return static_cast<T>(r);
  } else if constexpr (kIsComplex<T>) {
    switch (op) {
      case Opcode::kNegate:
        return -a;
      case Opcode::kExp:
        return std::exp(a);
      case Opcode::kExpm1:
        return std::exp(a) - T(1);
      case Opcode::kLog:
        return std::log(a);
      case Opcode::kLog1p:
        return std::log(a + T(1));
      case Opcode::kLogistic:
        return T(1) / (T(1) + std::exp(-a));
      case Opcode::kSqrt:
        return std::sqrt(a);
      case Opcode::kRsqrt:
        return T(1) / std::sqrt(a);
      case Opcode::kTanh:
        return std::tanh(a);
      case Opcode::kSin:
        return std::sin(a);
      case Opcode::kCos:
        return std::cos(a);
      case Opcode::kTan:
        return std::tan(a);
      case Opcode::kAtan:
        return std::atan(a);
      case Opcode::kAcos:
        return std::acos(a);
      case Opcode::kAcosh:
        return std::acosh(a);
      case Opcode::kAsin:
        return std::asin(a);
      case Opcode::kAsinh:
        return std::asinh(a);
      case Opcode::kAtanh:
        return std::atanh(a);
      case Opcode::kCosh:
        return std::cosh(a);
      case Opcode::kSinh:
        return std::sinh(a);
      default:
        return a;
    }
  } else {
    return a;
  }
}

// The total-order key of a float: a signed integer that orders
// -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
template <typename T>
inline int64_t TotalOrderKey(T v) {
  if constexpr (std::is_same_v<T, double>) {
    int64_t bits = std::bit_cast<int64_t>(v);
    return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t bits = std::bit_cast<int32_t>(v);
    return bits < 0 ? bits ^ std::numeric_limits<int32_t>::max() : bits;
  } else {
    int16_t bits = std::bit_cast<int16_t>(v);
    return bits < 0 ? bits ^ std::numeric_limits<int16_t>::max() : bits;
  }
}

// `dir` applied to two ordered values.
template <typename U>
inline bool CompareOrdered(ComparisonDirection dir, U x, U y) {
  switch (dir) {
    case ComparisonDirection::kEq:
      return x == y;
    case ComparisonDirection::kNe:
      return x != y;
    case ComparisonDirection::kGe:
      return x >= y;
    case ComparisonDirection::kGt:
      return x > y;
    case ComparisonDirection::kLe:
      return x <= y;
    case ComparisonDirection::kLt:
      return x < y;
  }
  return false;
}

template <typename T>
inline bool CompareOp(ComparisonDirection dir, bool total_order, T a, T b) {
  if constexpr (kIsComplex<T>) {
    if (dir == ComparisonDirection::kEq) return a == b;
    if (dir == ComparisonDirection::kNe) return a != b;
    return false;
  } else if constexpr (kIsFloat<T>) {
    if (total_order) return CompareOrdered(dir, TotalOrderKey(a), TotalOrderKey(b));
    return CompareOrdered(dir, static_cast<Wide<T>>(a), static_cast<Wide<T>>(b));
  } else {
    return CompareOrdered(dir, a, b);
  }
}

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_SCALAR_OPS_H_
