// Elementwise kernels: one switch on the element type and opcode, then a
// tight loop over raw buffers.
#include <bit>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/interpreter.h"
#include "eval/scalar_ops.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {
namespace {

absl::Status TypeError(const Instruction& instruction, PrimitiveType type) {
  return absl::UnimplementedError(absl::StrCat(
      OpName(instruction.opcode()), " is not supported for element type ", TypeName(type)));
}

// Kept as written: clang-format 14 reflows X-macro lists differently on every run.
// clang-format off
#define HLOGYM_BINARY_CASES(X) \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kPower) X(kMaximum) \
  X(kMinimum) X(kAtan2) X(kAnd) X(kOr) X(kXor) X(kShiftLeft) X(kShiftRightArithmetic) \
  X(kShiftRightLogical) X(kMulhi)

#define HLOGYM_UNARY_CASES(X) \
  X(kNegate) X(kAbs) X(kSign) X(kNot) X(kPopulationCount) X(kClz) X(kFloor) X(kCeil) \
  X(kRoundNearestAfz) X(kRoundNearestEven) X(kErf) X(kCbrt) X(kExp) X(kExpm1) X(kLog) \
  X(kLog1p) X(kLogistic) X(kSqrt) X(kRsqrt) X(kTanh) X(kSin) X(kCos) X(kTan) X(kAtan) \
  X(kAcos) X(kAcosh) X(kAsin) X(kAsinh) X(kAtanh) X(kCosh) X(kSinh)
// clang-format on

template <typename T>
bool BinaryLoop(Opcode op, const T* a, const T* b, T* out, int64_t n) {
  switch (op) {
#define HLOGYM_CASE(name)                                                             \
  case Opcode::name:                                                                  \
    if constexpr (BinaryApplies<T>(Opcode::name)) {                                   \
      for (int64_t i = 0; i < n; ++i) out[i] = BinaryOp<T>(Opcode::name, a[i], b[i]); \
      return true;                                                                    \
    }                                                                                 \
    return false;
    HLOGYM_BINARY_CASES(HLOGYM_CASE)
#undef HLOGYM_CASE
    default:
      return false;
  }
}

template <typename T>
bool UnaryLoop(Opcode op, const T* a, T* out, int64_t n) {
  switch (op) {
#define HLOGYM_CASE(name)                                                      \
  case Opcode::name:                                                           \
    if constexpr (UnaryApplies<T>(Opcode::name)) {                             \
      for (int64_t i = 0; i < n; ++i) out[i] = UnaryOp<T>(Opcode::name, a[i]); \
      return true;                                                             \
    }                                                                          \
    return false;
    HLOGYM_UNARY_CASES(HLOGYM_CASE)
#undef HLOGYM_CASE
    default:
      return false;
  }
}

// XLA's reduce-precision on the bits of a float of `nbits` bits with
// `src_exp` exponent and `src_mant` mantissa bits.
uint64_t ReducePrecisionBits(uint64_t bits, int nbits, int src_exp, int src_mant, int exponent_bits,
                             int mantissa_bits) {
  const uint64_t all = nbits == 64 ? ~0ULL : ((1ULL << nbits) - 1);
  if (mantissa_bits < src_mant) {
    const int shift = src_mant - mantissa_bits;
    const uint64_t last_bit_mask = 1ULL << shift;
    const uint64_t base_bias = (last_bit_mask >> 1) - 1;
    const uint64_t last_bit = (bits & last_bit_mask) >> shift;
    const uint64_t truncation_mask = ~(last_bit_mask - 1);
    bits = ((bits + last_bit + base_bias) & truncation_mask) & all;
  }
  if (exponent_bits < src_exp) {
    const uint64_t sign_mask = 1ULL << (nbits - 1);
    const uint64_t exp_mask = ((1ULL << src_exp) - 1) << src_mant;
    const int64_t bias = (1LL << (src_exp - 1)) - 1;
    const int64_t reduced_bias = (1LL << (exponent_bits - 1)) - 1;
    const uint64_t max_exp = static_cast<uint64_t>(bias + reduced_bias);
    const uint64_t min_exp = static_cast<uint64_t>(bias - reduced_bias);
    const uint64_t exponent = bits & exp_mask;
    const uint64_t signed_zero = bits & sign_mask;
    if (exponent > (max_exp << src_mant)) {
      bits = signed_zero | exp_mask;
    } else if (exponent <= (min_exp << src_mant)) {
      bits = signed_zero;
    }
  }
  return bits;
}

template <typename T>
void ReducePrecisionLoop(const T* in, T* out, int64_t n, int exponent_bits, int mantissa_bits) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t,
                               std::conditional_t<sizeof(T) == 4, uint32_t, uint16_t>>;
  constexpr int kBits = 8 * sizeof(T);
  constexpr int kMant = std::is_same_v<T, double>        ? 52
                        : std::is_same_v<T, float>       ? 23
                        : std::is_same_v<T, Eigen::half> ? 10
                                                         : 7;
  constexpr int kExp = kBits - 1 - kMant;
  for (int64_t i = 0; i < n; ++i) {
    const U bits = std::bit_cast<U>(in[i]);
    if (std::isnan(static_cast<Wide<T>>(in[i]))) {
      out[i] = in[i];
      continue;
    }
    out[i] = std::bit_cast<T>(static_cast<U>(
        ReducePrecisionBits(bits, kBits, kExp, kMant, exponent_bits, mantissa_bits)));
  }
}

absl::StatusOr<ValuePtr> EvalConvert(const Instruction& instruction, const Value& in) {
  const PrimitiveType from = in.shape.element_type();
  const PrimitiveType to = instruction.shape().element_type();
  auto out = NewArray(instruction.shape());
  const int64_t n = in.element_count();
  if (from == to) {
    if (n > 0) std::memcpy(out->bytes(), in.bytes(), in.size_bytes);
    return ValuePtr(out);
  }
  bool ok = true;
  bool dispatched = DispatchType(from, [&](auto from_tag) {
    using S = typename decltype(from_tag)::type;
    ok = DispatchType(to, [&](auto to_tag) {
      using D = typename decltype(to_tag)::type;
      const S* src = in.as<S>();
      D* dst = out->mutable_as<D>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertElement<D, S>(src[i]);
    });
  });
  if (dispatched && ok) return ValuePtr(out);
  // A narrow type (f8, f4, sub-byte int) on either side: go through doubles
  // with the bit-exact codecs of hlo/literal.h.
  const bool from_float = IsFloatingPointType(from), to_float = IsFloatingPointType(to);
  const bool from_int = IsIntegralType(from) || from == PrimitiveType::kPred;
  const bool to_int = IsIntegralType(to) || to == PrimitiveType::kPred;
  if ((!from_float && !from_int) || (!to_float && !to_int)) {
    return TypeError(instruction, IsArrayType(from) && !dispatched ? from : to);
  }
  Literal src_lit = ValueToLiteral(in);
  Literal dst_lit(instruction.shape());
  for (int64_t i = 0; i < n; ++i) {
    if (to_float) {
      dst_lit.SetFromDouble(i, src_lit.GetAsDouble(i));
    } else if (to == PrimitiveType::kPred) {
      dst_lit.SetFromInt64(i, src_lit.GetAsDouble(i) != 0 ? 1 : 0);
    } else if (from_float) {
      double v = src_lit.GetAsDouble(i);
      int64_t bits = BitWidth(to);
      double lo = IsSignedIntegralType(to) ? -std::ldexp(1.0, bits - 1) : 0;
      double hi =
          IsSignedIntegralType(to) ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
      if (std::isnan(v)) v = 0;
      v = std::min(std::max(v, lo), hi);
      if (IsSignedIntegralType(to))
        dst_lit.SetFromInt64(i, static_cast<int64_t>(v));
      else
        dst_lit.SetFromUint64(i, static_cast<uint64_t>(v));
    } else if (IsUnsignedIntegralType(from)) {
      dst_lit.SetFromUint64(i, src_lit.GetAsUint64(i));
    } else {
      dst_lit.SetFromInt64(i, src_lit.GetAsInt64(i));
    }
  }
  HLOGYM_ASSIGN(v, ValueFromLiteral(dst_lit));
  return v;
}

absl::StatusOr<ValuePtr> EvalBitcastConvert(const Instruction& instruction, const ValuePtr& in) {
  auto out = NewArray(instruction.shape());
  if (out->size_bytes != in->size_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("bitcast-convert from ", in->shape.ToString(false), " to ",
                     instruction.shape().ToString(false), " changes the byte size"));
  }
  if (BitWidth(in->shape.element_type()) < 8 || BitWidth(out->shape.element_type()) < 8) {
    if (in->shape.element_type() != out->shape.element_type() &&
        BitWidth(in->shape.element_type()) != BitWidth(out->shape.element_type())) {
      return absl::UnimplementedError("bitcast-convert of sub-byte types");
    }
  }
  if (out->size_bytes > 0) std::memcpy(out->bytes(), in->bytes(), out->size_bytes);
  return ValuePtr(out);
}

}  // namespace

bool ApplyBinary(Opcode op, PrimitiveType type, const uint8_t* a, const uint8_t* b, uint8_t* out,
                 int64_t n) {
  bool ok = false;
  DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ok = BinaryLoop<T>(op, reinterpret_cast<const T*>(a), reinterpret_cast<const T*>(b),
                       reinterpret_cast<T*>(out), n);
  });
  return ok;
}

namespace {

absl::Status CheckElementCount(const Value& v, const Shape& shape) {
  if (v.element_count() != shape.ElementCount()) {
    return absl::InvalidArgumentError(absl::StrCat("operand shape ", v.shape.ToString(false),
                                                   " does not match result shape ",
                                                   shape.ToString(false)));
  }
  return absl::OkStatus();
}

// The elementwise instructions whose evaluation takes more than a few lines
// (EvalElementwise dispatches here).

absl::StatusOr<ValuePtr> EvalCompare(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (operands.size() != 2) return absl::InvalidArgumentError("compare needs 2 operands");
  if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
  if (auto s = CheckElementCount(*operands[1], shape); !s.ok()) return s;
  const PrimitiveType type = operands[0]->shape.element_type();
  if (operands[1]->shape.element_type() != type || shape.element_type() != PrimitiveType::kPred) {
    return absl::InvalidArgumentError("compare operand types differ");
  }
  const ComparisonDirection dir = instruction.attrs().comparison_direction;
  const bool total = instruction.attrs().comparison_type == ComparisonType::kTotalOrder;
  auto out = NewArray(shape);
  bool* dst = out->mutable_as<bool>();
  if (!DispatchType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* a = operands[0]->as<T>();
        const T* b = operands[1]->as<T>();
        switch (dir) {
#define HLOGYM_DIR(d)                                                   \
  case ComparisonDirection::d:                                          \
    for (int64_t i = 0; i < n; ++i)                                     \
      dst[i] = CompareOp<T>(ComparisonDirection::d, total, a[i], b[i]); \
    break;
          HLOGYM_DIR(kEq)
          HLOGYM_DIR(kNe) HLOGYM_DIR(kGe) HLOGYM_DIR(kGt) HLOGYM_DIR(kLe) HLOGYM_DIR(kLt)
#undef HLOGYM_DIR
        }
      })) {
    return TypeError(instruction, type);
  }
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalSelect(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (operands.size() != 3) return absl::InvalidArgumentError("select needs 3 operands");
  const Value& pred = *operands[0];
  if (pred.shape.element_type() != PrimitiveType::kPred) {
    return absl::InvalidArgumentError("select predicate is not pred");
  }
  if (auto s = CheckElementCount(*operands[1], shape); !s.ok()) return s;
  if (auto s = CheckElementCount(*operands[2], shape); !s.ok()) return s;
  const bool scalar_pred = pred.element_count() == 1 && n != 1;
  if (!scalar_pred) {
    if (auto s = CheckElementCount(pred, shape); !s.ok()) return s;
  }
  if (scalar_pred) return pred.as<bool>()[0] ? operands[1] : operands[2];
  const int width = ByteWidth(shape.element_type());
  auto out = NewArray(shape);
  const bool* p = pred.as<bool>();
  auto sel = [&](auto* dst, const auto* a, const auto* b) {
    for (int64_t i = 0; i < n; ++i) dst[i] = p[i] ? a[i] : b[i];
  };
  switch (width) {
    case 1:
      sel(out->mutable_as<uint8_t>(), operands[1]->as<uint8_t>(), operands[2]->as<uint8_t>());
      break;
    case 2:
      sel(out->mutable_as<uint16_t>(), operands[1]->as<uint16_t>(), operands[2]->as<uint16_t>());
      break;
    case 4:
      sel(out->mutable_as<uint32_t>(), operands[1]->as<uint32_t>(), operands[2]->as<uint32_t>());
      break;
    case 8:
      sel(out->mutable_as<uint64_t>(), operands[1]->as<uint64_t>(), operands[2]->as<uint64_t>());
      break;
    case 16:
      sel(out->mutable_as<std::complex<double>>(), operands[1]->as<std::complex<double>>(),
          operands[2]->as<std::complex<double>>());
      break;
    default:
      return TypeError(instruction, shape.element_type());
  }
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalClamp(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (operands.size() != 3) return absl::InvalidArgumentError("clamp needs 3 operands");
  if (auto s = CheckElementCount(*operands[1], shape); !s.ok()) return s;
  const Value& lo = *operands[0];
  const Value& hi = *operands[2];
  if ((lo.element_count() != 1 && lo.element_count() != n) ||
      (hi.element_count() != 1 && hi.element_count() != n)) {
    return absl::InvalidArgumentError("clamp bounds do not match the operand");
  }
  const PrimitiveType type = shape.element_type();
  auto out = NewArray(shape);
  bool ok = false;
  DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsComplex<T>) {
      const T* l = lo.as<T>();
      const T* x = operands[1]->as<T>();
      const T* h = hi.as<T>();
      T* dst = out->mutable_as<T>();
      const bool ls = lo.element_count() == 1 && n != 1, hs = hi.element_count() == 1 && n != 1;
      for (int64_t i = 0; i < n; ++i) {
        const T v = BinaryOp<T>(Opcode::kMaximum, x[i], l[ls ? 0 : i]);
        dst[i] = BinaryOp<T>(Opcode::kMinimum, v, h[hs ? 0 : i]);
      }
      ok = true;
    }
  });
  if (!ok) return TypeError(instruction, type);
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalComplex(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
  if (auto s = CheckElementCount(*operands[1], shape); !s.ok()) return s;
  auto out = NewArray(shape);
  const PrimitiveType type = operands[0]->shape.element_type();
  if (type == PrimitiveType::kF32 && shape.element_type() == PrimitiveType::kC64) {
    const float* a = operands[0]->as<float>();
    const float* b = operands[1]->as<float>();
    auto* dst = out->mutable_as<std::complex<float>>();
    for (int64_t i = 0; i < n; ++i) dst[i] = {a[i], b[i]};
  } else if (type == PrimitiveType::kF64 && shape.element_type() == PrimitiveType::kC128) {
    const double* a = operands[0]->as<double>();
    const double* b = operands[1]->as<double>();
    auto* dst = out->mutable_as<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) dst[i] = {a[i], b[i]};
  } else {
    return TypeError(instruction, type);
  }
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalRealImagAbsIsFinite(const Instruction& instruction,
                                                 Operands operands) {
  const Opcode op = instruction.opcode();
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
  const PrimitiveType type = operands[0]->shape.element_type();
  if (op == Opcode::kIsFinite) {
    auto out = NewArray(shape);
    bool* dst = out->mutable_as<bool>();
    bool ok = false;
    DispatchType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kIsFloat<T>) {
        const T* a = operands[0]->as<T>();
        for (int64_t i = 0; i < n; ++i) dst[i] = std::isfinite(static_cast<Wide<T>>(a[i]));
        ok = true;
      }
    });
    if (!ok) return TypeError(instruction, type);
    return ValuePtr(out);
  }
  if (IsComplexType(type)) {
    auto out = NewArray(shape);
    auto run = [&](auto* src, auto* dst) {
      for (int64_t i = 0; i < n; ++i) {
        dst[i] = op == Opcode::kReal   ? src[i].real()
                 : op == Opcode::kImag ? src[i].imag()
                                       : std::abs(src[i]);
      }
    };
    if (type == PrimitiveType::kC64) {
      if (shape.element_type() != PrimitiveType::kF32) return TypeError(instruction, type);
      run(operands[0]->as<std::complex<float>>(), out->mutable_as<float>());
    } else {
      if (shape.element_type() != PrimitiveType::kF64) return TypeError(instruction, type);
      run(operands[0]->as<std::complex<double>>(), out->mutable_as<double>());
    }
    return ValuePtr(out);
  }
  if (op == Opcode::kReal) return operands[0];
  if (op == Opcode::kImag) {
    auto out = NewArray(shape);
    if (out->size_bytes > 0) std::memset(out->bytes(), 0, out->size_bytes);
    return ValuePtr(out);
  }
  // abs of a real type is EvalElementwise's unary path.
  return absl::InternalError("abs of a real type reached the complex-parts evaluation");
}

absl::StatusOr<ValuePtr> EvalReducePrecision(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  const int64_t n = shape.ElementCount();
  if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
  const PrimitiveType type = shape.element_type();
  const int eb = static_cast<int>(instruction.attrs().exponent_bits);
  const int mb = static_cast<int>(instruction.attrs().mantissa_bits);
  if (eb < 1 || mb < 0) return absl::InvalidArgumentError("bad reduce-precision bits");
  auto out = NewArray(shape);
  bool ok = false;
  DispatchType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      ReducePrecisionLoop<T>(operands[0]->as<T>(), out->mutable_as<T>(), n, eb, mb);
      ok = true;
    }
  });
  if (!ok) return TypeError(instruction, type);
  return ValuePtr(out);
}

}  // namespace

absl::StatusOr<ValuePtr> EvalElementwise(const Instruction& instruction, Operands operands) {
  const Opcode op = instruction.opcode();
  for (const ValuePtr& operand : operands) {
    if (!operand->shape.IsArray()) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpName(op), " operand is not an array: ", operand->shape.ToString()));
    }
  }
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return absl::InvalidArgumentError("result is not an array");
  const int64_t n = shape.ElementCount();

  switch (op) {
    case Opcode::kConvert: {
      if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
      return EvalConvert(instruction, *operands[0]);
    }
    case Opcode::kBitcastConvert:
      return EvalBitcastConvert(instruction, operands[0]);
    case Opcode::kCompare:
      return EvalCompare(instruction, operands);
    case Opcode::kSelect:
      return EvalSelect(instruction, operands);
    case Opcode::kClamp:
      return EvalClamp(instruction, operands);
    case Opcode::kComplex:
      return EvalComplex(instruction, operands);
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kAbs:
    case Opcode::kIsFinite:
      // abs of a real type: the unary path below.
      if (op == Opcode::kAbs && !IsComplexType(operands[0]->shape.element_type())) break;
      return EvalRealImagAbsIsFinite(instruction, operands);
    case Opcode::kReducePrecision:
      return EvalReducePrecision(instruction, operands);
    default:
      break;
  }

  const PrimitiveType type = shape.element_type();
  if (operands.size() == 1 && IsElementwiseUnary(op)) {
    if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
    if (operands[0]->shape.element_type() != type) {
      return absl::InvalidArgumentError("operand and result element types differ");
    }
    auto out = NewArray(shape);
    bool ok = false;
    DispatchType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ok = UnaryLoop<T>(op, operands[0]->as<T>(), out->mutable_as<T>(), n);
    });
    if (!ok) return TypeError(instruction, type);
    return ValuePtr(out);
  }
  if (operands.size() == 2) {
    if (auto s = CheckElementCount(*operands[0], shape); !s.ok()) return s;
    if (auto s = CheckElementCount(*operands[1], shape); !s.ok()) return s;
    if (operands[0]->shape.element_type() != type || operands[1]->shape.element_type() != type) {
      return absl::InvalidArgumentError("operand and result element types differ");
    }
    auto out = NewArray(shape);
    if (!ApplyBinary(op, type, operands[0]->bytes(), operands[1]->bytes(), out->bytes(), n)) {
      return TypeError(instruction, type);
    }
    return ValuePtr(out);
  }
  return absl::UnimplementedError(absl::StrCat("elementwise opcode ", OpName(op)));
}

}  // namespace hlogym::eval
