// Shapes as XLA writes them: an element type with dimensions (static,
// bounded-dynamic `<=N` or unbounded `?`) and an optional layout, or a tuple
// of shapes, or a token.
#ifndef HLOGYM_HLO_SHAPE_H_
#define HLOGYM_HLO_SHAPE_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/primitive_type.h"

namespace hlogym {

// Minor-to-major dimension order plus whatever follows the ':' in XLA's
// layout syntax (tiles "T(8,128)", element size "E(4)", memory space "S(1)",
// dim level types, ...), kept exactly as written.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string details;  // text after ':' without the ':'; empty if none

  bool operator==(const Layout& other) const = default;
  std::string ToString() const;  // "{1,0}" or "{1,0:T(8,128)}"
};

class Shape {
 public:
  // Dimension size of an unbounded dynamic dimension, written `?`.
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  Shape() = default;
  // An array shape with static dimensions and no layout.
  Shape(PrimitiveType element_type, std::vector<int64_t> dimensions);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Scalar(PrimitiveType element_type) { return Shape(element_type, {}); }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType type) { element_type_ = type; }

  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsScalar() const { return IsArray() && dimensions_.empty(); }

  // Array shapes.
  int64_t rank() const { return static_cast<int64_t>(dimensions_.size()); }
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  std::vector<int64_t>& mutable_dimensions() { return dimensions_; }
  // Dynamic dimensions; the size of a bounded one is its bound.
  bool is_dynamic_dimension(int64_t i) const { return !dynamic_.empty() && dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool is_dynamic);
  bool is_static() const;  // no dynamic dimension anywhere, tuples included
  bool is_unbounded_dynamic() const;
  // Product of the dimension sizes (bounds for dynamic ones; 0 for an unbounded
  // one); 1 for scalars. Inline: the evaluator asks it for every value.
  int64_t ElementCount() const {
    int64_t count = 1;
    for (int64_t d : dimensions_) count *= (d == kUnboundedSize ? 0 : d);
    return count;
  }
  // Bytes of the array data (sub-byte types packed), or the sum over tuple
  // elements; tokens are 0.
  int64_t ByteSize() const;
  // ByteSize(), or nullopt when the element count or the byte count does not
  // fit in int64 (an absurd shape; the verifier rejects those).
  std::optional<int64_t> CheckedByteSize() const;

  // Tuple shapes.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }
  int64_t tuple_shapes_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }
  // The subshape at a tuple index path.
  const Shape& Subshape(std::span<const int64_t> index) const;

  bool has_layout() const { return layout_.has_value(); }
  const std::optional<Layout>& layout() const { return layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout();  // recursively
  // Sets the default (descending, major-to-minor) layout on arrays, recursively.
  void SetDefaultLayout();

  // What Equal compares, as XLA's Shape::Equal: everything unless turned off,
  // e.g. a.Equal(b, {.dynamic = false, .layouts = Shape::Layouts::kIgnore}).
  enum class Layouts {
    kCompare,  // equal, or both absent
    kIgnore,
    kCompareWhereBothHave,  // a shape without a layout matches any layout
    // A shape without a layout has the default one, as XLA's parser gives it: XLA's
    // ShapeUtil::Equal for shapes that may have been read without layouts.
    kCompareMissingAsDefault,
  };
  struct Equality {
    bool element_type = true;
    bool dynamic = true;  // which dimensions are dynamic
    Layouts layouts = Layouts::kCompare;
  };
  bool Equal(const Shape& other, const Equality& what) const;
  // Exact equality: Equal(other, {}).
  bool operator==(const Shape& other) const = default;
  // Equal ignoring layouts (XLA's ShapeUtil::Compatible for our purposes,
  // dynamic-ness included).
  bool Compatible(const Shape& other) const { return Equal(other, {.layouts = Layouts::kIgnore}); }
  // As Compatible, but element types may differ.
  bool SameDimensions(const Shape& other) const {
    return Equal(other, {.element_type = false, .layouts = Layouts::kIgnore});
  }

  // XLA's text form: "f32[2,<=3,?]{2,1,0}", "(f32[], s32[4])", "token[]".
  std::string ToString(bool print_layout = true) const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dimensions_;
  std::vector<bool> dynamic_;  // empty when all dimensions are static
  std::vector<Shape> tuple_shapes_;
  std::optional<Layout> layout_;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_SHAPE_H_
