// The evaluator's internal value representation and element-type dispatch.
//
// A Value is an array (a shared, untyped, row-major buffer whose element
// layout is the Literal's: little-endian, one byte for pred, two bytes of
// bits for f16/bf16, (re, im) pairs for complex), a tuple of shared Values,
// or a token. Buffers are shared so reshape/copy/bitcast of a default layout,
// get-tuple-element and tuple never copy data, and an update (dynamic-update-slice,
// scatter) writes into its operand where nothing else holds it (OverwritableCopy).
//
// Typed kernels never look at elements one by one through a virtual or
// type-switching accessor: they switch on the element type once, then loop
// over raw pointers of the matching C++ type (DispatchType below).
#ifndef HLOGYM_EVAL_VALUE_H_
#define HLOGYM_EVAL_VALUE_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace hlogym::eval {

// Names as std::string (absl::StrCat here may not take std::string_view).
inline std::string OpName(Opcode op) { return std::string(OpcodeName(op)); }
inline std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

struct Value;
using ValuePtr = std::shared_ptr<const Value>;

struct Value {
  // Arrays of at most this many bytes (scalars, short vectors: most values of a
  // loop's scalar code) keep their data in the Value itself, so that making one
  // is one allocation, not three (the Value, the buffer, the buffer's count).
  static constexpr int64_t kInlineBytes = 32;

  explicit Value(const Shape& shape) : shape(shape) {}
  // `data` may point into `inline_data`: a copy would point into the original.
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  Shape shape;
  // Array data: ElementCount() * ByteWidth(element type) bytes; shared, or
  // (at most kInlineBytes) `inline_data`, held by no count of its own.
  std::shared_ptr<uint8_t[]> data;
  int64_t size_bytes = 0;
  std::vector<ValuePtr> elements;  // tuples
  alignas(16) uint8_t inline_data[kInlineBytes];

  int64_t element_count() const { return shape.IsArray() ? shape.ElementCount() : 0; }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.get());
  }
  template <typename T>
  T* mutable_as() const {
    return reinterpret_cast<T*>(data.get());
  }
  uint8_t* bytes() const { return data.get(); }
};

// A new array Value of `shape` with uninitialized data.
std::shared_ptr<Value> NewArray(const Shape& shape);
// Bytes of array data allocated by NewArray and not yet freed, process-wide
// (what EvaluatorOptions::max_bytes limits); arrays held inline are not counted.
int64_t LiveArrayBytes();
// A new array Value sharing `source`'s data under another shape (same
// element type and count).
std::shared_ptr<Value> ShareArray(const ValuePtr& source, const Shape& shape);
// The array an update writes into (dynamic-update-slice, scatter): `operand` itself where
// nothing else can see it (this is the only reference to the Value and to its buffer, which
// Interpreter::Run arranges for an operand at its last use, and its shape is `shape`), so that a
// loop filling a buffer row by row (lax.scan's stacked outputs) does not copy the whole buffer
// each iteration; otherwise a new array of `shape` holding a copy of `operand`'s data.
std::shared_ptr<Value> OverwritableCopy(const ValuePtr& operand, const Shape& shape);
ValuePtr MakeTuple(const Shape& shape, std::vector<ValuePtr> elements);
ValuePtr MakeToken();

// Conversions to and from Literal (elided literals are rejected).
absl::StatusOr<ValuePtr> ValueFromLiteral(const Literal& literal);
Literal ValueToLiteral(const Value& value);

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims);

// --- element types ---------------------------------------------------------

template <typename T>
struct Tag {
  using type = T;
};

template <typename T>
inline constexpr bool kIsLowFloat =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsLowFloat<T>;
template <typename T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <typename T>
inline constexpr bool kIsPred = std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !kIsPred<T>;
// The type arithmetic runs in: float for f16/bf16, else the type itself.
template <typename T>
using Wide = std::conditional_t<kIsLowFloat<T>, float, T>;

// Calls f(Tag<T>{}) for the C++ type of `type`; false if the type has none
// (sub-byte ints, f8/f4 formats, tuples, tokens).
template <typename F>
bool DispatchType(PrimitiveType type, F&& f) {
  switch (type) {
    case PrimitiveType::kPred:
      f(Tag<bool>{});
      return true;
    case PrimitiveType::kS8:
      f(Tag<int8_t>{});
      return true;
    case PrimitiveType::kS16:
      f(Tag<int16_t>{});
      return true;
    case PrimitiveType::kS32:
      f(Tag<int32_t>{});
      return true;
    case PrimitiveType::kS64:
      f(Tag<int64_t>{});
      return true;
    case PrimitiveType::kU8:
      f(Tag<uint8_t>{});
      return true;
    case PrimitiveType::kU16:
      f(Tag<uint16_t>{});
      return true;
    case PrimitiveType::kU32:
      f(Tag<uint32_t>{});
      return true;
    case PrimitiveType::kU64:
      f(Tag<uint64_t>{});
      return true;
    case PrimitiveType::kF16:
      f(Tag<Eigen::half>{});
      return true;
    case PrimitiveType::kBF16:
      f(Tag<Eigen::bfloat16>{});
      return true;
    case PrimitiveType::kF32:
      f(Tag<float>{});
      return true;
    case PrimitiveType::kF64:
      f(Tag<double>{});
      return true;
    case PrimitiveType::kC64:
      f(Tag<std::complex<float>>{});
      return true;
    case PrimitiveType::kC128:
      f(Tag<std::complex<double>>{});
      return true;
    default:
      return false;
  }
}

// Element conversion with XLA's `convert` semantics: float -> int saturates
// (NaN -> 0), int -> int wraps, -> pred is "!= 0", complex -> real keeps the
// real part, f16/bf16 round to nearest even (through f32, as Eigen does).
template <typename D, typename S>
inline D ConvertElement(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (kIsComplex<S> && !kIsComplex<D>) {
    return ConvertElement<D>(s.real());
  } else if constexpr (kIsPred<D>) {
    return static_cast<Wide<S>>(s) != Wide<S>(0);
  } else if constexpr (kIsInt<D>) {
    if constexpr (kIsFloat<S>) {
      double v = static_cast<double>(static_cast<Wide<S>>(s));
      if (v != v) return D(0);
      if (v <= static_cast<double>(std::numeric_limits<D>::min())) {
        return std::numeric_limits<D>::min();
      }
      if (v >= static_cast<double>(std::numeric_limits<D>::max())) {
        return std::numeric_limits<D>::max();
      }
      return static_cast<D>(v);
    } else {
      return static_cast<D>(s);
    }
  } else if constexpr (kIsLowFloat<D>) {
    if constexpr (std::is_same_v<S, double>) {
      return static_cast<D>(static_cast<float>(s));
    } else if constexpr (kIsLowFloat<S>) {
      return static_cast<D>(static_cast<float>(s));
    } else if constexpr (kIsPred<S>) {
      return static_cast<D>(s ? 1.0f : 0.0f);
    } else {
      return static_cast<D>(static_cast<float>(s));
    }
  } else if constexpr (kIsFloat<D>) {
    if constexpr (kIsLowFloat<S>) {
      return static_cast<D>(static_cast<float>(s));
    } else {
      return static_cast<D>(s);
    }
  } else if constexpr (kIsComplex<D>) {
    using R = typename D::value_type;
    if constexpr (kIsComplex<S>) {
      return D(static_cast<R>(s.real()), static_cast<R>(s.imag()));
    } else {
      return D(ConvertElement<R>(s), R(0));
    }
  } else {
    static_assert(sizeof(D) == 0, "unhandled conversion");
  }
}

// The element types the linear-algebra kernels compute (in double) for.
inline bool IsF32OrF64(PrimitiveType type) {
  return type == PrimitiveType::kF32 || type == PrimitiveType::kF64;
}

// Every element of an array as a double (complex: the real part), and an
// array of `shape` from a vector (of doubles, or complex doubles), each element
// converted to the element type: the kernels that compute in double (linear
// algebra, fft) read and write with these.
std::vector<double> ToDoubles(const Value& v);
template <typename S>
std::shared_ptr<Value> FromVector(const Shape& shape, const std::vector<S>& data) {
  auto out = NewArray(shape);
  DispatchType(shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out->template mutable_as<T>();
    for (int64_t i = 0; i < out->element_count(); ++i) dst[i] = ConvertElement<T>(data[i]);
  });
  return out;
}

// --- strided copies ----------------------------------------------------------

// Copies a block of `dims` elements of `elem_size` bytes: element i (a
// multi-index) is read from src + sum(i_k * src_strides[k]) and written to
// dst + sum(i_k * dst_strides[k]) (strides in elements, may be 0 or
// negative).
void StridedCopy(int elem_size, std::span<const int64_t> dims, uint8_t* dst,
                 std::span<const int64_t> dst_strides, const uint8_t* src,
                 std::span<const int64_t> src_strides);

// 64-bit mixing (splitmix64 finalizer) and a hash of bytes (xxHash's XXH3), for the
// deterministic fills (elided constants, opaque custom-calls) and output digests.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t HashBytes(const void* data, size_t size, uint64_t seed);
uint64_t HashValue(const Value& value, uint64_t seed);

// Fills `value` (array) with deterministic pseudo-random elements from
// `seed`: floats uniform in [lo, hi], integers uniform in [int_lo, int_hi]
// (clipped to the type's range), pred 0/1.
void FillDeterministic(Value& value, uint64_t seed, double lo, double hi, int64_t int_lo,
                       int64_t int_hi);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_VALUE_H_
