// rng-bit-generator, rng, rng-get-and-update-state and the GetRngSeed
// custom-call, with XLA's bit streams (see prng.h).
//
// `rng` is evaluated as XLA's RngExpander rewrites it (the rng-expander pass
// builds the same computation in HLO): the key is
//   seed ^ ((id * 0x9E3779B97F4A7C15) >> 32)
// where seed is EvaluatorOptions::rng_seed (what GetRngSeed returns) and id
// is the instruction's unique id; the 128-bit counter comes from the
// evaluator's rng-get-and-update-state counter (starting at 0, advanced by
// the number of 32-bit words the op draws); bits come from Philox; uniform
// floats take the top mantissa-width bits scaled to [a, b); uniform integers
// a + (bits mod (b - a)) computed as XLA does; normal draws use Box-Muller
// on a [0, 1) uniform array of the split shape. f16/bf16 draws are f32 draws
// converted. Single replica and partition (their ids are 0).
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "eval/interpreter.h"
#include "eval/prng.h"
#include "eval/scalar_ops.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  constexpr uint32_t kMulA = 0xD2511F53u, kMulB = 0xCD9E8D57u;
  constexpr uint32_t kWeylA = 0x9E3779B9u, kWeylB = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(x[0]) * kMulA;
    const uint64_t p1 = static_cast<uint64_t>(x[2]) * kMulB;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kWeylA;
    key[1] += kWeylB;
  }
  return x;
}

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r : kRot[group % 2]) {
      x[0] += x[1];
      x[1] = std::rotl(x[1], r) ^ x[0];
    }
    // Key injection after every four rounds.
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return x;
}

namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }
absl::Status Unsupported(const std::string& what) { return absl::UnimplementedError(what); }

// Stores the low `width` bytes of `bits` as element `i` of `out`.
void Store(uint8_t* out, int width, int64_t i, uint64_t bits) {
  switch (width) {
    case 1:
      out[i] = static_cast<uint8_t>(bits);
      break;
    case 2:
      reinterpret_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(bits);
      break;
    case 4:
      reinterpret_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(bits);
      break;
    default:
      reinterpret_cast<uint64_t*>(out)[i] = bits;
      break;
  }
}

absl::StatusOr<int> BitsWidth(const Shape& shape, std::string_view who) {
  if (!shape.IsArray() || !IsIntegralType(shape.element_type()) ||
      (BitWidth(shape.element_type()) < 8)) {
    return Unsupported(
        absl::StrCat(std::string(who), ": result type must be an integer of 8, 16, 32 or 64 bits"));
  }
  return BitWidth(shape.element_type());
}

std::array<uint32_t, 2> Split(uint64_t v) {
  return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}

// The split XLA's ThreeFry and normal-distribution expansions use: dims
// before the split dimension, its size, and the product of the dims after.
struct HalfSplit {
  int64_t pre = 1, dim = 2, post = 1;
  int64_t half() const { return (dim + 1) / 2; }
};

HalfSplit SplitIntoHalves(const Shape& shape) {
  HalfSplit s;
  const auto& dims = shape.dimensions();
  if (dims.empty()) return s;  // a scalar counts as [2], sliced to element 0
  int64_t split = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = static_cast<int64_t>(i);
      break;
    }
  }
  if (split < 0) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] > dims[split]) split = static_cast<int64_t>(i);
    }
  }
  s.pre = s.post = 1;
  for (int64_t i = 0; i < split; ++i) s.pre *= dims[i];
  for (size_t i = split + 1; i < dims.size(); ++i) s.post *= dims[i];
  s.dim = dims[split];
  return s;
}

// Calls f(position in the half array, b, position in the full array) for
// every element of the full array, where b in {0, 1} says which of the two
// halves (the ThreeFry output words, the Box-Muller pair) it takes.
template <typename F>
void ForEachHalfPair(const HalfSplit& s, bool scalar, F&& f) {
  if (scalar) {
    f(int64_t{0}, 0, int64_t{0});
    return;
  }
  const int64_t hd = s.half();
  for (int64_t p = 0; p < s.pre; ++p) {
    for (int64_t a = 0; a < hd; ++a) {
      for (int b = 0; b < 2; ++b) {
        const int64_t c = 2 * a + b;
        if (c >= s.dim) continue;
        for (int64_t q = 0; q < s.post; ++q) {
          f((p * hd + a) * s.post + q, b, (p * s.dim + c) * s.post + q);
        }
      }
    }
  }
}

}  // namespace

absl::Status PhiloxFill(uint64_t key, uint64_t& counter_lo, uint64_t& counter_hi,
                        const Shape& shape, uint8_t* out) {
  HLOGYM_ASSIGN(width_or, BitsWidth(shape, "Philox"));
  const int bits = width_or;
  const int64_t n = shape.ElementCount();
  const auto k = Split(key);
  const int64_t per_block = bits == 64 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t i = 0; i < blocks; ++i) {
    const uint64_t lo = counter_lo + static_cast<uint64_t>(i);
    const uint64_t hi = lo < counter_lo ? counter_hi + 1 : counter_hi;
    const auto l = Split(lo), h = Split(hi);
    const auto w = Philox4x32({l[0], l[1], h[0], h[1]}, k);
    if (bits == 64) {
      for (int j = 0; j < 2 && 2 * i + j < n; ++j) {
        Store(out, 8, 2 * i + j, w[2 * j] | (static_cast<uint64_t>(w[2 * j + 1]) << 32));
      }
    } else {
      for (int j = 0; j < 4 && 4 * i + j < n; ++j) Store(out, bits / 8, 4 * i + j, w[j]);
    }
  }
  const uint64_t lo = counter_lo + static_cast<uint64_t>(blocks);
  if (lo < counter_lo) ++counter_hi;
  counter_lo = lo;
  return absl::OkStatus();
}

absl::Status ThreeFryFill(uint64_t key, uint64_t& counter, const Shape& shape, uint8_t* out) {
  HLOGYM_ASSIGN(width_or, BitsWidth(shape, "ThreeFry"));
  const int bits = width_or;
  const auto k = Split(key);
  if (bits == 64) {
    const int64_t n = shape.ElementCount();
    for (int64_t i = 0; i < n; ++i) {
      const auto w = ThreeFry2x32(Split(counter + static_cast<uint64_t>(i)), k);
      Store(out, 8, i, w[0] | (static_cast<uint64_t>(w[1]) << 32));
    }
    counter += static_cast<uint64_t>(n);
    return absl::OkStatus();
  }
  const HalfSplit s = SplitIntoHalves(shape);
  const bool scalar = shape.dimensions().empty();
  const int64_t half_count = scalar ? 1 : s.pre * s.half() * s.post;
  const uint64_t base = counter;
  ForEachHalfPair(s, scalar, [&](int64_t h, int b, int64_t pos) {
    const auto w = ThreeFry2x32(Split(base + static_cast<uint64_t>(h)), k);
    Store(out, bits / 8, pos, w[b]);
  });
  counter += static_cast<uint64_t>(half_count);
  return absl::OkStatus();
}

namespace {

absl::StatusOr<ValuePtr> EvalRngBitGenerator(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || operands.size() != 1) {
    return Invalid("rng-bit-generator: expects one operand and a (state, bits) tuple result");
  }
  const Value& state = *operands[0];
  if (!Matches(state, shape.tuple_shapes(0))) return Invalid("rng-bit-generator: state shape");
  const RandomAlgorithm algorithm = ResolveRngAlgorithm(instruction.attrs().rng_algorithm);
  const int64_t words = state.element_count();
  if (state.shape.element_type() != PrimitiveType::kU64 || state.shape.rank() != 1 || words < 2 ||
      words > (algorithm == RandomAlgorithm::kPhilox ? 3 : 2)) {
    return Unsupported(absl::StrCat(
        "rng-bit-generator: ", std::string(RandomAlgorithmName(algorithm)), " needs a u64[2]",
        std::string(algorithm == RandomAlgorithm::kPhilox ? " or u64[3]" : ""), " state"));
  }
  const uint64_t* s = state.as<uint64_t>();
  auto bits = NewArray(shape.tuple_shapes(1));
  auto new_state = NewArray(shape.tuple_shapes(0));
  uint64_t* ns = new_state->mutable_as<uint64_t>();
  ns[0] = s[0];
  if (algorithm == RandomAlgorithm::kThreeFry) {
    uint64_t counter = s[1];
    HLOGYM_RETURN_IF_ERROR(ThreeFryFill(s[0], counter, bits->shape, bits->bytes()));
    ns[1] = counter;
  } else {
    uint64_t lo = s[1], hi = words == 3 ? s[2] : s[0];
    HLOGYM_RETURN_IF_ERROR(PhiloxFill(s[0], lo, hi, bits->shape, bits->bytes()));
    ns[1] = lo;
    if (words == 3) ns[2] = hi;
  }
  return MakeTuple(shape, {new_state, bits});
}

// Advances the evaluator's 128-bit rng state by `delta`, returning the old
// value as u64[2] (low word first).
ValuePtr GetAndUpdateState(Interpreter& interp, const Shape& shape, uint64_t delta) {
  auto& counter = interp.rng_counter();
  auto out = NewArray(shape);
  out->mutable_as<uint64_t>()[0] = counter[0];
  out->mutable_as<uint64_t>()[1] = counter[1];
  const uint64_t lo = counter[0] + delta;
  if (lo < counter[0]) ++counter[1];
  counter[0] = lo;
  return out;
}

absl::StatusOr<ValuePtr> EvalRngGetAndUpdateState(Interpreter& interp,
                                                  const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_type() != PrimitiveType::kU64 || shape.rank() != 1 ||
      shape.dimensions(0) != 2) {
    return Invalid("rng-get-and-update-state: result must be u64[2]");
  }
  const RawAttribute* delta = instruction.attrs().FindRaw("delta");
  int64_t d = 0;
  if (delta == nullptr || !absl::SimpleAtoi(delta->value, &d)) {
    return Invalid("rng-get-and-update-state: missing or malformed delta=");
  }
  return GetAndUpdateState(interp, shape, static_cast<uint64_t>(d));
}

// Uniform [a, b) floats of type T from `bits` (unsigned integers of T's
// width), as XLA's ConvertRandomBitsToUniformFloatingPoint.
template <typename T, typename U>
T UniformFloat(U bits, T a, T b) {
  constexpr int kMantissa = std::numeric_limits<T>::digits - 1;
  const T value = static_cast<T>(bits >> (8 * sizeof(U) - kMantissa));
  const T unit = BinaryOp<T>(Opcode::kMultiply, value, static_cast<T>(std::ldexp(1.0, -kMantissa)));
  return BinaryOp<T>(Opcode::kAdd,
                     BinaryOp<T>(Opcode::kMultiply, unit, BinaryOp<T>(Opcode::kSubtract, b, a)), a);
}

template <typename T>
absl::StatusOr<ValuePtr> RngFloat(Interpreter& interp, const Instruction& instruction, uint64_t key,
                                  T a, T b, const Shape& shape) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  constexpr PrimitiveType kBitsType = sizeof(T) == 8 ? PrimitiveType::kU64 : PrimitiveType::kU32;
  const int64_t n = shape.ElementCount();
  const Shape state_shape = Shape(PrimitiveType::kU64, {2});
  ValuePtr state = GetAndUpdateState(interp, state_shape, n * (sizeof(T) / 4));
  uint64_t lo = state->as<uint64_t>()[0], hi = state->as<uint64_t>()[1];
  auto out = NewArray(shape);
  T* dst = out->mutable_as<T>();
  if (instruction.attrs().rng_distribution != RandomDistribution::kNormal) {
    std::vector<U> bits(n);
    HLOGYM_RETURN_IF_ERROR(
        PhiloxFill(key, lo, hi, Shape(kBitsType, {n}), reinterpret_cast<uint8_t*>(bits.data())));
    for (int64_t i = 0; i < n; ++i) dst[i] = UniformFloat<T, U>(bits[i], a, b);
    return ValuePtr(out);
  }
  // Box-Muller on a uniform [0, 1) array of the split shape [..., half, 2, ...].
  const HalfSplit s = SplitIntoHalves(shape);
  const bool scalar = shape.dimensions().empty();
  const int64_t half_count = scalar ? 1 : s.pre * s.half() * s.post;
  std::vector<U> bits(2 * half_count);
  HLOGYM_RETURN_IF_ERROR(PhiloxFill(key, lo, hi, Shape(kBitsType, {2 * half_count}),
                                    reinterpret_cast<uint8_t*>(bits.data())));
  // Element (h, b) of the concatenated [half..., 2] layout: h splits into
  // (outer, post) around the inserted pair dimension.
  auto uniform = [&](int64_t h, int b) {
    const int64_t outer = h / s.post, q = h % s.post;
    return UniformFloat<T, U>(bits[(outer * 2 + b) * s.post + q], T(0), T(1));
  };
  const T floor = static_cast<T>(1.0e-7f),
          two_pi = static_cast<T>(2.0f * std::numbers::pi_v<float>);
  const T minus_two = static_cast<T>(-2.0f);
  const T mean = a, sigma = b;
  ForEachHalfPair(s, scalar, [&](int64_t h, int which, int64_t pos) {
    const T u1 = BinaryOp<T>(Opcode::kMaximum, uniform(h, 0), floor);
    const T v1 = BinaryOp<T>(Opcode::kMultiply, two_pi, uniform(h, 1));
    const T u2 = UnaryOp<T>(
        Opcode::kSqrt, BinaryOp<T>(Opcode::kMultiply, minus_two, UnaryOp<T>(Opcode::kLog, u1)));
    const T z = BinaryOp<T>(Opcode::kMultiply,
                            UnaryOp<T>(which == 0 ? Opcode::kSin : Opcode::kCos, v1), u2);
    dst[pos] = BinaryOp<T>(Opcode::kAdd, mean, BinaryOp<T>(Opcode::kMultiply, sigma, z));
  });
  return ValuePtr(out);
}

// Uniform integers in [a, b) as XLA's ConvertRandomBitsToUniformInt:
// a + (d >> 1) + (d - (d >> 1)) with d = bits mod (b - a) (unsigned; a zero
// range leaves d = bits, as integer remainder by zero does).
template <typename T>
absl::StatusOr<ValuePtr> RngInt(Interpreter& interp, uint64_t key, T a, T b, const Shape& shape) {
  using U = std::make_unsigned_t<T>;
  constexpr PrimitiveType kBitsType = sizeof(T) == 8 ? PrimitiveType::kU64 : PrimitiveType::kU32;
  const int64_t n = shape.ElementCount();
  ValuePtr state = GetAndUpdateState(interp, Shape(PrimitiveType::kU64, {2}), n * (sizeof(T) / 4));
  uint64_t lo = state->as<uint64_t>()[0], hi = state->as<uint64_t>()[1];
  std::vector<U> bits(n);
  HLOGYM_RETURN_IF_ERROR(
      PhiloxFill(key, lo, hi, Shape(kBitsType, {n}), reinterpret_cast<uint8_t*>(bits.data())));
  auto out = NewArray(shape);
  T* dst = out->mutable_as<T>();
  const U range = static_cast<U>(static_cast<U>(b) - static_cast<U>(a));
  for (int64_t i = 0; i < n; ++i) {
    const U d = range == 0 ? bits[i] : static_cast<U>(bits[i] % range);
    const U half = static_cast<U>(d >> 1);
    dst[i] = static_cast<T>(static_cast<U>(static_cast<U>(a) + half) + static_cast<U>(d - half));
  }
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalRng(Interpreter& interp, const Instruction& instruction,
                                 Operands operands) {
  const Shape& shape = instruction.shape();
  if (operands.size() != 2 || !shape.IsArray() || !operands[0]->shape.IsArray() ||
      !operands[1]->shape.IsArray() || operands[0]->element_count() != 1 ||
      operands[1]->element_count() != 1 ||
      operands[0]->shape.element_type() != shape.element_type() ||
      operands[1]->shape.element_type() != shape.element_type()) {
    return Invalid("rng: expects two scalar operands of the result's element type");
  }
  const uint64_t id = static_cast<uint64_t>(instruction.unique_id());
  const uint64_t key = interp.options().rng_seed ^ ((id * 0x9E3779B97F4A7C15ULL) >> 32);
  const bool normal = instruction.attrs().rng_distribution == RandomDistribution::kNormal;
  const PrimitiveType type = shape.element_type();
  switch (type) {
    case PrimitiveType::kF32:
      return RngFloat<float>(interp, instruction, key, operands[0]->as<float>()[0],
                             operands[1]->as<float>()[0], shape);
    case PrimitiveType::kF64:
      return RngFloat<double>(interp, instruction, key, operands[0]->as<double>()[0],
                              operands[1]->as<double>()[0], shape);
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16: {
      // Drawn in f32 and converted, as XLA's expansion does.
      const Shape f32_shape = Shape(PrimitiveType::kF32, shape.dimensions());
      float a = 0, b = 0;
      DispatchType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        a = ConvertElement<float>(operands[0]->as<T>()[0]);
        b = ConvertElement<float>(operands[1]->as<T>()[0]);
      });
      HLOGYM_ASSIGN(f32, RngFloat<float>(interp, instruction, key, a, b, f32_shape));
      auto out = NewArray(shape);
      DispatchType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < out->element_count(); ++i) {
          out->mutable_as<T>()[i] = ConvertElement<T>(f32->as<float>()[i]);
        }
      });
      return ValuePtr(out);
    }
    default:
      break;
  }
  if (normal) return Unsupported("rng: rng_normal needs a floating-point result");
  switch (type) {
    case PrimitiveType::kS32:
      return RngInt<int32_t>(interp, key, operands[0]->as<int32_t>()[0],
                             operands[1]->as<int32_t>()[0], shape);
    case PrimitiveType::kU32:
      return RngInt<uint32_t>(interp, key, operands[0]->as<uint32_t>()[0],
                              operands[1]->as<uint32_t>()[0], shape);
    case PrimitiveType::kS64:
      return RngInt<int64_t>(interp, key, operands[0]->as<int64_t>()[0],
                             operands[1]->as<int64_t>()[0], shape);
    case PrimitiveType::kU64:
      return RngInt<uint64_t>(interp, key, operands[0]->as<uint64_t>()[0],
                              operands[1]->as<uint64_t>()[0], shape);
    default:
      return Unsupported(absl::StrCat("rng: element type ", TypeName(type),
                                      " (XLA expands only 32/64-bit integers and floats)"));
  }
}

}  // namespace

absl::StatusOr<ValuePtr> EvalGetRngSeed(Interpreter& interp, const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_type() != PrimitiveType::kU64 || shape.rank() != 0) {
    return Invalid("custom-call GetRngSeed: result must be u64[]");
  }
  auto out = NewArray(shape);
  out->mutable_as<uint64_t>()[0] = interp.options().rng_seed;
  return ValuePtr(out);
}

absl::StatusOr<ValuePtr> EvalRandom(Interpreter& interpreter, const Instruction& instruction,
                                    Operands operands) {
  switch (instruction.opcode()) {
    case Opcode::kRngBitGenerator:
      return EvalRngBitGenerator(instruction, operands);
    case Opcode::kRng:
      return EvalRng(interpreter, instruction, operands);
    case Opcode::kRngGetAndUpdateState:
      return EvalRngGetAndUpdateState(interpreter, instruction);
    default:
      return Unsupported(OpName(instruction.opcode()));
  }
}

}  // namespace hlogym::eval
