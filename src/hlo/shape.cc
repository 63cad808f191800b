#include "hlo/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hlogym {

std::string Layout::ToString() const {
  std::string out = absl::StrCat("{", absl::StrJoin(minor_to_major, ","));
  if (!details.empty()) absl::StrAppend(&out, ":", details);
  out += "}";
  return out;
}

Shape::Shape(PrimitiveType element_type, std::vector<int64_t> dimensions)
    : element_type_(element_type), dimensions_(std::move(dimensions)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = PrimitiveType::kTuple;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = PrimitiveType::kToken;
  return shape;
}

void Shape::set_dynamic_dimension(int64_t i, bool is_dynamic) {
  if (dynamic_.empty()) {
    if (!is_dynamic) return;
    dynamic_.assign(dimensions_.size(), false);
  }
  dynamic_[i] = is_dynamic;
  if (std::none_of(dynamic_.begin(), dynamic_.end(), [](bool d) { return d; })) {
    dynamic_.clear();
  }
}

bool Shape::is_static() const {
  if (!dynamic_.empty()) return false;
  return std::all_of(tuple_shapes_.begin(), tuple_shapes_.end(),
                     [](const Shape& s) { return s.is_static(); });
}

bool Shape::is_unbounded_dynamic() const {
  if (std::find(dimensions_.begin(), dimensions_.end(), kUnboundedSize) != dimensions_.end()) {
    return true;
  }
  return std::any_of(tuple_shapes_.begin(), tuple_shapes_.end(),
                     [](const Shape& s) { return s.is_unbounded_dynamic(); });
}

int64_t Shape::ByteSize() const {
  if (IsTuple()) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes_) total += s.ByteSize();
    return total;
  }
  if (!IsArray()) return 0;
  return (ElementCount() * BitWidth(element_type_) + 7) / 8;
}

std::optional<int64_t> Shape::CheckedByteSize() const {
  int64_t total = 0;
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes_) {
      std::optional<int64_t> bytes = s.CheckedByteSize();
      if (!bytes || __builtin_add_overflow(total, *bytes, &total)) return std::nullopt;
    }
    return total;
  }
  if (!IsArray()) return 0;
  int64_t bits = BitWidth(element_type_);
  for (int64_t d : dimensions_) {
    if (__builtin_mul_overflow(bits, d == kUnboundedSize ? 0 : d, &bits)) return std::nullopt;
  }
  if (bits > std::numeric_limits<int64_t>::max() - 7) return std::nullopt;
  return (bits + 7) / 8;
}

const Shape& Shape::Subshape(std::span<const int64_t> index) const {
  const Shape* shape = this;
  for (int64_t i : index) shape = &shape->tuple_shapes_[i];
  return *shape;
}

void Shape::clear_layout() {
  layout_.reset();
  for (Shape& s : tuple_shapes_) s.clear_layout();
}

void Shape::SetDefaultLayout() {
  if (IsTuple()) {
    for (Shape& s : tuple_shapes_) s.SetDefaultLayout();
    return;
  }
  if (!IsArray()) return;
  Layout layout;
  for (int64_t i = rank() - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  layout_ = std::move(layout);
}

namespace {
// Whether `layout` is the default (descending) one of an array of `rank` dimensions.
bool IsDefaultLayout(const Layout& layout, int64_t rank) {
  if (!layout.details.empty() || static_cast<int64_t>(layout.minor_to_major.size()) != rank) {
    return false;
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (layout.minor_to_major[i] != rank - 1 - i) return false;
  }
  return true;
}
}  // namespace

bool Shape::Equal(const Shape& other, const Equality& what) const {
  if (IsTuple() != other.IsTuple()) return false;
  if (what.element_type && element_type_ != other.element_type_) return false;
  switch (what.layouts) {
    case Layouts::kCompare:
      if (layout_ != other.layout_) return false;
      break;
    case Layouts::kIgnore:
      break;
    case Layouts::kCompareWhereBothHave:
      if (has_layout() && other.has_layout() && layout_ != other.layout_) return false;
      break;
    case Layouts::kCompareMissingAsDefault:
      if (has_layout() && other.has_layout()) {
        if (layout_ != other.layout_) return false;
      } else if (has_layout() != other.has_layout()) {
        const Shape& with = has_layout() ? *this : other;
        if (!IsDefaultLayout(*with.layout_, with.rank())) return false;
      }
      break;
  }
  if (IsTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].Equal(other.tuple_shapes_[i], what)) return false;
    }
    return true;
  }
  return dimensions_ == other.dimensions_ && (!what.dynamic || dynamic_ == other.dynamic_);
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (i > 0) out += ", ";
      // XLA marks every fifth element of long tuples.
      if (i > 0 && i % 5 == 0) absl::StrAppend(&out, "/*index=", i, "*/");
      out += tuple_shapes_[i].ToString(print_layout);
    }
    out += ")";
    return out;
  }
  std::string out(PrimitiveTypeName(element_type_));
  out += "[";
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (i > 0) out += ",";
    if (dimensions_[i] == kUnboundedSize) {
      out += "?";
      continue;
    }
    if (is_dynamic_dimension(i)) out += "<=";
    absl::StrAppend(&out, dimensions_[i]);
  }
  out += "]";
  if (print_layout && layout_.has_value() && IsArray()) {
    std::string layout = layout_->ToString();
    if (layout != "{}") out += layout;  // XLA omits the empty layout of scalars
  }
  return out;
}

}  // namespace hlogym
