// Literal: the value of a constant. Dense row-major (logical index order,
// independent of the layout) storage of one array, or a tuple of literals.
// Sub-byte types (s2, u4, f4e2m1fn, ...) and pred use one byte per element.
#ifndef HLOGYM_HLO_LITERAL_H_
#define HLOGYM_HLO_LITERAL_H_

#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/array_allocator.h"
#include "hlo/shape.h"

namespace hlogym {

// Bit-exact conversions between doubles and every real float format; encoding
// rounds to nearest even and saturates to inf or NaN as the format allows.
double DecodeFloatBits(PrimitiveType type, uint64_t bits);
uint64_t EncodeFloatBits(PrimitiveType type, double value);

class Literal;

// An array leaf of a literal: its tuple index path ({} for an array literal)
// and the array.
struct LiteralLeaf {
  std::vector<int64_t> index;
  const Literal* array;
};

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of `shape` (tuples get zero-filled elements).
  explicit Literal(Shape shape);
  // A constant whose value was not printed (`constant({...})`). It holds no
  // data: element accessors must not be called on it.
  static Literal Elided(Shape shape);
  // An array literal holding a copy of `bytes` (its elements in the shape's type, row-major);
  // nothing is zero-filled first.
  static Literal FromBytes(Shape shape, std::span<const uint8_t> bytes);
  // A tuple literal of `elements`, which must match the shape's element shapes.
  static Literal Tuple(Shape shape, std::vector<Literal> elements);

  template <typename T>
  static Literal Scalar(PrimitiveType type, T value);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  int64_t element_count() const { return shape_.ElementCount(); }

  std::span<const uint8_t> raw() const { return data_; }
  std::span<uint8_t> mutable_raw() { return data_; }
  const std::vector<Literal>& tuple_elements() const { return tuple_elements_; }
  std::vector<Literal>& mutable_tuple_elements() { return tuple_elements_; }
  // The array leaves (this literal itself when it is an array), depth-first,
  // tuple elements in order, as XLA flattens a tuple's buffers; tokens have
  // none. They point into this literal.
  std::vector<LiteralLeaf> ArrayLeaves() const;

  // Element access by linear (row-major) index, converting from/to the
  // literal's element type. Ints read as floats are exact up to 2^53; floats
  // written to ints truncate toward zero (as XLA's convert does).
  double GetAsDouble(int64_t index) const;
  int64_t GetAsInt64(int64_t index) const;
  uint64_t GetAsUint64(int64_t index) const;  // raw bits for unsigned types
  std::complex<double> GetAsComplex(int64_t index) const;
  bool GetAsBool(int64_t index) const;  // nonzero
  void SetFromDouble(int64_t index, double value);
  void SetFromInt64(int64_t index, int64_t value);
  void SetFromUint64(int64_t index, uint64_t value);
  void SetFromComplex(int64_t index, std::complex<double> value);
  // The element's storage bits (zero-extended), for bitcasts and hashing.
  uint64_t GetBits(int64_t index) const;
  void SetBits(int64_t index, uint64_t bits);

  // True if every element equals `value` converted to the element type, bit for
  // bit as XLA compares (a float -0 is not 0). False for tuples and elided literals.
  bool IsAll(double value) const;

  // XLA's one-line text for the value only (ToStringWithoutShapeOneline):
  // "1", "true", "{1, 2}", "{ { 1, 2 }, { 3, 4 } }", pred arrays as "{1, 0}",
  // "( 1, {2, 3} )" for tuples, "{...}" when elided. Floats as
  // xla::RoundTripFpToString prints them (see hlo/float_bits.h).
  std::string ValueToString() const;

  // Same shape (layout included) and bit-identical data.
  bool operator==(const Literal& other) const;

  template <typename H>
  friend H AbslHashValue(H h, const Literal& literal) {
    h = H::combine(std::move(h), literal.shape_.ToString(), literal.elided_);
    h = H::combine_contiguous(std::move(h), literal.data_.data(), literal.data_.size());
    for (const Literal& e : literal.tuple_elements_) h = H::combine(std::move(h), e);
    return h;
  }

 private:
  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t, ArrayAllocator<uint8_t>> data_;
  std::vector<Literal> tuple_elements_;
};

template <typename T>
Literal Literal::Scalar(PrimitiveType type, T value) {
  Literal literal(Shape::Scalar(type));
  if constexpr (std::is_floating_point_v<T>) {
    literal.SetFromDouble(0, value);
  } else if constexpr (std::is_same_v<T, bool>) {
    literal.SetFromInt64(0, value ? 1 : 0);
  } else {
    literal.SetFromInt64(0, static_cast<int64_t>(value));
  }
  return literal;
}

}  // namespace hlogym

#endif  // HLOGYM_HLO_LITERAL_H_
