#include "hlo/literal.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "hlo/float_bits.h"

namespace hlogym {
namespace {

constexpr uint64_t Mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const int shift = 64 - width;
  return static_cast<int64_t>(bits << shift) >> shift;
}

// Range of a signed/unsigned integer type of `width` bits.
int64_t SignedMax(int width) { return static_cast<int64_t>(Mask(width - 1)); }
int64_t SignedMin(int width) { return -SignedMax(width) - 1; }
uint64_t UnsignedMax(int width) { return Mask(width); }

uint64_t LoadLittleEndian(const uint8_t* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

void StoreLittleEndian(uint8_t* p, int bytes, uint64_t value) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Float to integer as XLA's convert does it: truncate toward zero, saturate
// at the type's bounds, NaN gives 0.
int64_t DoubleToSigned(double value, int width) {
  if (std::isnan(value)) return 0;
  const int64_t max = SignedMax(width);
  const int64_t min = SignedMin(width);
  if (value >= static_cast<double>(max)) return max;
  if (value <= static_cast<double>(min)) return min;
  return static_cast<int64_t>(value);
}

uint64_t DoubleToUnsigned(double value, int width) {
  if (std::isnan(value) || value <= 0) return 0;
  const uint64_t max = UnsignedMax(width);
  if (value >= static_cast<double>(max)) return max;
  return static_cast<uint64_t>(value);
}

// The part type of a complex type.
PrimitiveType ComplexPartType(PrimitiveType type) {
  return type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
}

}  // namespace

Literal::Literal(Shape shape) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    tuple_elements_.reserve(shape_.tuple_shapes_size());
    for (const Shape& element : shape_.tuple_shapes()) tuple_elements_.emplace_back(element);
  } else if (shape_.IsArray()) {
    data_.assign(static_cast<size_t>(shape_.ElementCount()) * ByteWidth(shape_.element_type()), 0);
  }
}

Literal Literal::FromBytes(Shape shape, std::span<const uint8_t> bytes) {
  assert(shape.IsArray() && bytes.size() == static_cast<size_t>(shape.ElementCount()) *
                                                ByteWidth(shape.element_type()));
  Literal literal;
  literal.shape_ = std::move(shape);
  literal.data_.assign(bytes.begin(), bytes.end());
  return literal;
}

namespace {

void CollectArrayLeaves(const Literal& literal, std::vector<int64_t>& index,
                        std::vector<LiteralLeaf>& leaves) {
  if (literal.shape().IsTuple()) {
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      index.push_back(static_cast<int64_t>(i));
      CollectArrayLeaves(literal.tuple_elements()[i], index, leaves);
      index.pop_back();
    }
  } else if (literal.shape().IsArray()) {
    leaves.push_back({index, &literal});
  }
}

}  // namespace

std::vector<LiteralLeaf> Literal::ArrayLeaves() const {
  std::vector<LiteralLeaf> leaves;
  std::vector<int64_t> index;
  CollectArrayLeaves(*this, index, leaves);
  return leaves;
}

Literal Literal::Tuple(Shape shape, std::vector<Literal> elements) {
  assert(shape.IsTuple() && static_cast<int64_t>(elements.size()) == shape.tuple_shapes_size());
  Literal literal;
  literal.shape_ = std::move(shape);
  literal.tuple_elements_ = std::move(elements);
  return literal;
}

Literal Literal::Elided(Shape shape) {
  Literal literal;
  literal.shape_ = std::move(shape);
  literal.elided_ = true;
  return literal;
}

uint64_t Literal::GetBits(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  const int bytes = type == PrimitiveType::kC128 ? 8 : ByteWidth(type);
  assert(index >= 0 && static_cast<size_t>((index + 1) * ByteWidth(type)) <= data_.size());
  const uint64_t raw = LoadLittleEndian(data_.data() + index * ByteWidth(type), bytes);
  return BitWidth(type) < 64 ? raw & Mask(BitWidth(type)) : raw;
}

void Literal::SetBits(int64_t index, uint64_t bits) {
  const PrimitiveType type = shape_.element_type();
  const int bytes = type == PrimitiveType::kC128 ? 8 : ByteWidth(type);
  assert(index >= 0 && static_cast<size_t>((index + 1) * ByteWidth(type)) <= data_.size());
  if (BitWidth(type) < 64) bits &= Mask(BitWidth(type));
  StoreLittleEndian(data_.data() + index * ByteWidth(type), bytes, bits);
}

std::complex<double> Literal::GetAsComplex(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  if (IsComplexType(type)) {
    const PrimitiveType part = ComplexPartType(type);
    const int part_bytes = ByteWidth(part);
    const uint8_t* p = data_.data() + index * ByteWidth(type);
    return {DecodeFloatBits(part, LoadLittleEndian(p, part_bytes)),
            DecodeFloatBits(part, LoadLittleEndian(p + part_bytes, part_bytes))};
  }
  return {GetAsDouble(index), 0.0};
}

double Literal::GetAsDouble(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) return GetBits(index) != 0 ? 1.0 : 0.0;
  if (IsSignedIntegralType(type)) {
    return static_cast<double>(SignExtend(GetBits(index), BitWidth(type)));
  }
  if (IsUnsignedIntegralType(type)) return static_cast<double>(GetBits(index));
  if (IsFloatingPointType(type)) return DecodeFloatBits(type, GetBits(index));
  if (IsComplexType(type)) return GetAsComplex(index).real();
  return 0.0;
}

int64_t Literal::GetAsInt64(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) return GetBits(index) != 0 ? 1 : 0;
  if (IsSignedIntegralType(type)) return SignExtend(GetBits(index), BitWidth(type));
  if (IsUnsignedIntegralType(type)) return static_cast<int64_t>(GetBits(index));
  if (IsFloatingPointType(type) || IsComplexType(type)) {
    return DoubleToSigned(GetAsDouble(index), 64);
  }
  return 0;
}

uint64_t Literal::GetAsUint64(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) return GetBits(index) != 0 ? 1 : 0;
  if (IsSignedIntegralType(type)) {
    return static_cast<uint64_t>(SignExtend(GetBits(index), BitWidth(type)));
  }
  if (IsUnsignedIntegralType(type)) return GetBits(index);
  if (IsFloatingPointType(type) || IsComplexType(type)) {
    return DoubleToUnsigned(GetAsDouble(index), 64);
  }
  return 0;
}

bool Literal::GetAsBool(int64_t index) const {
  const PrimitiveType type = shape_.element_type();
  if (IsFloatingPointType(type)) return DecodeFloatBits(type, GetBits(index)) != 0;
  if (IsComplexType(type)) {
    std::complex<double> c = GetAsComplex(index);
    return c.real() != 0 || c.imag() != 0;
  }
  return GetBits(index) != 0;
}

void Literal::SetFromDouble(int64_t index, double value) {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) {
    SetBits(index, value != 0 ? 1 : 0);  // NaN is true, as static_cast<bool>
  } else if (IsSignedIntegralType(type)) {
    SetBits(index, static_cast<uint64_t>(DoubleToSigned(value, BitWidth(type))));
  } else if (IsUnsignedIntegralType(type)) {
    SetBits(index, DoubleToUnsigned(value, BitWidth(type)));
  } else if (IsFloatingPointType(type)) {
    SetBits(index, EncodeFloatBits(type, value));
  } else if (IsComplexType(type)) {
    SetFromComplex(index, {value, 0.0});
  }
}

void Literal::SetFromInt64(int64_t index, int64_t value) {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) {
    SetBits(index, value != 0 ? 1 : 0);
  } else if (IsIntegralType(type)) {
    SetBits(index, static_cast<uint64_t>(value));  // wraps to the width
  } else if (IsFloatingPointType(type)) {
    // Integers convert to the narrow types through float (Eigen, ml_dtypes).
    const double d = type == PrimitiveType::kF64 ? static_cast<double>(value)
                                                 : static_cast<double>(static_cast<float>(value));
    SetBits(index, EncodeFloatBits(type, d));
  } else if (type == PrimitiveType::kC64) {
    SetFromComplex(index, {static_cast<double>(static_cast<float>(value)), 0.0});
  } else if (type == PrimitiveType::kC128) {
    SetFromComplex(index, {static_cast<double>(value), 0.0});
  }
}

void Literal::SetFromUint64(int64_t index, uint64_t value) {
  const PrimitiveType type = shape_.element_type();
  if (type == PrimitiveType::kPred) {
    SetBits(index, value != 0 ? 1 : 0);
  } else if (IsIntegralType(type)) {
    SetBits(index, value);
  } else if (IsFloatingPointType(type)) {
    const double d = type == PrimitiveType::kF64 ? static_cast<double>(value)
                                                 : static_cast<double>(static_cast<float>(value));
    SetBits(index, EncodeFloatBits(type, d));
  } else if (type == PrimitiveType::kC64) {
    SetFromComplex(index, {static_cast<double>(static_cast<float>(value)), 0.0});
  } else if (type == PrimitiveType::kC128) {
    SetFromComplex(index, {static_cast<double>(value), 0.0});
  }
}

void Literal::SetFromComplex(int64_t index, std::complex<double> value) {
  const PrimitiveType type = shape_.element_type();
  if (!IsComplexType(type)) {
    SetFromDouble(index, value.real());
    return;
  }
  const PrimitiveType part = ComplexPartType(type);
  const int part_bytes = ByteWidth(part);
  uint8_t* p = data_.data() + index * ByteWidth(type);
  StoreLittleEndian(p, part_bytes, EncodeFloatBits(part, value.real()));
  StoreLittleEndian(p + part_bytes, part_bytes, EncodeFloatBits(part, value.imag()));
}

bool Literal::IsAll(double value) const {
  if (elided_ || !shape_.IsArray() || std::isnan(value)) return false;
  const PrimitiveType type = shape_.element_type();
  const int64_t n = element_count();
  if (type == PrimitiveType::kPred || IsIntegralType(type)) {
    // The value must convert exactly.
    if (value != std::trunc(value)) return false;
    const int width = BitWidth(type);
    if (type == PrimitiveType::kPred) {
      if (value != 0 && value != 1) return false;
      const bool target = value == 1;
      for (int64_t i = 0; i < n; ++i) {
        if ((GetBits(i) != 0) != target) return false;
      }
      return true;
    }
    if (IsSignedIntegralType(type)) {
      if (value < static_cast<double>(SignedMin(width)) ||
          value > static_cast<double>(SignedMax(width)) || value >= 0x1p63) {
        return false;
      }
      const int64_t target = static_cast<int64_t>(value);
      for (int64_t i = 0; i < n; ++i) {
        if (SignExtend(GetBits(i), width) != target) return false;
      }
      return true;
    }
    if (value < 0 || value > static_cast<double>(UnsignedMax(width)) || value >= 0x1p64) {
      return false;
    }
    const uint64_t target = static_cast<uint64_t>(value);
    for (int64_t i = 0; i < n; ++i) {
      if (GetBits(i) != target) return false;
    }
    return true;
  }
  // Floats compare bit for bit, as XLA's Literal::IsAll does: -0 is not 0 (x + -0 stays).
  if (IsFloatingPointType(type)) {
    const uint64_t target = EncodeFloatBits(type, value);
    if (std::isnan(DecodeFloatBits(type, target))) return false;  // f4e2m1fn has no NaN
    for (int64_t i = 0; i < n; ++i) {
      if (GetBits(i) != target) return false;
    }
    return true;
  }
  if (IsComplexType(type)) {
    const PrimitiveType part = ComplexPartType(type);
    const double target = DecodeFloatBits(part, EncodeFloatBits(part, value));
    for (int64_t i = 0; i < n; ++i) {
      std::complex<double> c = GetAsComplex(i);
      if (c.real() != target || std::signbit(c.real()) != std::signbit(target) || c.imag() != 0 ||
          std::signbit(c.imag())) {
        return false;
      }
    }
    return true;
  }
  return false;
}

bool Literal::operator==(const Literal& other) const {
  return shape_ == other.shape_ && elided_ == other.elided_ && data_ == other.data_ &&
         tuple_elements_ == other.tuple_elements_;
}

namespace {

// One element as XLA's LiteralBase::GetAsString writes it (pred arrays use
// 1/0 instead, see below).
std::string ElementToString(const Literal& literal, int64_t index) {
  const PrimitiveType type = literal.shape().element_type();
  if (type == PrimitiveType::kPred) return literal.GetBits(index) != 0 ? "true" : "false";
  if (IsSignedIntegralType(type)) return absl::StrCat(literal.GetAsInt64(index));
  if (IsUnsignedIntegralType(type)) return absl::StrCat(literal.GetAsUint64(index));
  if (IsFloatingPointType(type)) return FloatBitsToString(type, literal.GetBits(index));
  if (IsComplexType(type)) {
    const PrimitiveType part = ComplexPartType(type);
    std::complex<double> c = literal.GetAsComplex(index);
    return absl::StrCat("(", FloatBitsToString(part, EncodeFloatBits(part, c.real())), ", ",
                        FloatBitsToString(part, EncodeFloatBits(part, c.imag())), ")");
  }
  return "";
}

// XLA's one-line dense array form (LiteralBase::ToStringWithoutShapeOneline):
// rank 1 "{1, 2}", innermost rows "{ 1, 2 }" (no inner spaces when a row has
// at most one element), outer levels "{ ... }", and for rank > 3 a
// "/*i<dim>=<index>*/" comment after each nested opening brace.
void AppendArray(const Literal& literal, const std::vector<int64_t>& dims, size_t depth,
                 std::vector<int64_t>& index, int64_t& linear, std::string* out) {
  const size_t rank = dims.size();
  if (depth == rank) {
    if (literal.shape().element_type() == PrimitiveType::kPred && rank > 0) {
      out->append(literal.GetBits(linear) != 0 ? "1" : "0");
    } else {
      out->append(ElementToString(literal, linear));
    }
    ++linear;
    return;
  }
  const int64_t n = dims[depth];
  const size_t remaining = rank - depth;
  if (rank == 1) {
    out->append("{");
  } else if (remaining == 1) {
    out->append(n <= 1 ? "{" : "{ ");
  } else if (rank > 3 && depth > 0) {
    absl::StrAppend(out, "{ /*i", depth - 1, "=", index.back(), "*/", n > 0 ? " " : "");
  } else {
    out->append("{ ");
  }
  for (int64_t i = 0; i < n; ++i) {
    index.push_back(i);
    AppendArray(literal, dims, depth + 1, index, linear, out);
    index.pop_back();
    if (i < n - 1) out->append(", ");
  }
  if (rank == 1) {
    out->append("}");
  } else if (remaining == 1) {
    out->append(n <= 1 ? "}" : " }");
  } else {
    out->append(" }");
  }
}

void AppendValue(const Literal& literal, std::string* out) {
  if (literal.elided()) {
    out->append("{...}");
    return;
  }
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    out->append("( ");
    const std::vector<Literal>& elements = literal.tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out->append(", ");
      AppendValue(elements[i], out);
    }
    out->append(" )");
    return;
  }
  if (shape.IsToken()) {
    out->append("token");
    return;
  }
  if (!shape.IsArray()) return;
  std::vector<int64_t> dims = shape.dimensions();
  for (int64_t& d : dims) {
    if (d == Shape::kUnboundedSize) d = 0;
  }
  std::vector<int64_t> index;
  int64_t linear = 0;
  AppendArray(literal, dims, 0, index, linear, out);
}

}  // namespace

std::string Literal::ValueToString() const {
  std::string out;
  AppendValue(*this, &out);
  return out;
}

}  // namespace hlogym
