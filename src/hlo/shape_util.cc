#include "hlo/shape_util.h"

#include <algorithm>

namespace hlogym {

bool IsZeroElementArray(const Shape& shape) { return shape.IsArray() && shape.ElementCount() == 0; }

Shape MakeShapeLike(PrimitiveType type, std::vector<int64_t> dims, const Shape& like) {
  Shape shape(type, std::move(dims));
  if (like.has_layout()) shape.SetDefaultLayout();
  return shape;
}

Shape ChangeElementType(const Shape& shape, PrimitiveType type) {
  Shape result = shape;
  result.set_element_type(type);
  return result;
}

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  if (shape.has_layout() &&
      static_cast<int64_t>(shape.layout()->minor_to_major.size()) == shape.rank()) {
    return shape.layout()->minor_to_major;
  }
  std::vector<int64_t> order;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return order;
}

std::vector<int64_t> MajorToMinor(const Shape& shape) {
  std::vector<int64_t> order = MinorToMajor(shape);
  std::reverse(order.begin(), order.end());
  return order;
}

Shape WithMinorToMajor(const Shape& shape, std::vector<int64_t> minor_to_major) {
  Shape result = shape;
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  result.set_layout(std::move(layout));
  return result;
}

std::vector<int64_t> InversePermutation(std::span<const int64_t> perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

bool IsIdentityPermutation(std::span<const int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsSortedDims(std::span<const int64_t> dims) {
  return std::is_sorted(dims.begin(), dims.end());
}

std::optional<std::vector<ReshapeGroup>> ReshapeGroups(std::span<const int64_t> a,
                                                       std::span<const int64_t> b) {
  const int64_t n = static_cast<int64_t>(a.size());
  const int64_t m = static_cast<int64_t>(b.size());
  std::vector<ReshapeGroup> groups;
  int64_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      groups.push_back({i, i + 1, j, j + 1});
      ++i;
      ++j;
      continue;
    }
    if (i < n && a[i] == 1) {
      groups.push_back({i, i + 1, j, j});
      ++i;
      continue;
    }
    if (j < m && b[j] == 1) {
      groups.push_back({i, i, j, j + 1});
      ++j;
      continue;
    }
    if (i >= n || j >= m || a[i] == 0 || b[j] == 0) return std::nullopt;
    const int64_t bi = i, bj = j;
    int64_t pa = a[i++], pb = b[j++];
    while (pa != pb) {
      if (pa < pb) {
        if (i >= n) return std::nullopt;
        pa *= a[i++];
      } else {
        if (j >= m) return std::nullopt;
        pb *= b[j++];
      }
    }
    groups.push_back({bi, i, bj, j});
  }
  return groups;
}

std::vector<std::pair<int64_t, int64_t>> DimensionsUnmodifiedByReshape(const Shape& from,
                                                                       const Shape& to) {
  std::vector<std::pair<int64_t, int64_t>> result;
  auto groups = ReshapeGroups(from.dimensions(), to.dimensions());
  if (!groups) return result;
  for (const ReshapeGroup& g : *groups) {
    if (g.a_end - g.a_begin == 1 && g.b_end - g.b_begin == 1) {
      result.emplace_back(g.a_begin, g.b_begin);
    }
  }
  return result;
}

std::optional<std::vector<int64_t>> ReshapeLeavesDimensionsUnmodified(
    const Shape& from, const Shape& to, std::span<const int64_t> input_dims) {
  auto unmodified = DimensionsUnmodifiedByReshape(from, to);
  std::vector<int64_t> output;
  for (int64_t dim : input_dims) {
    auto it = std::find_if(unmodified.begin(), unmodified.end(),
                           [&](const auto& p) { return p.first == dim; });
    if (it == unmodified.end()) return std::nullopt;
    output.push_back(it->second);
  }
  return output;
}

std::optional<DegenerateReshape> ReshapeMerelyInsertsOrDeletes1SizedDimensions(const Shape& from,
                                                                               const Shape& to) {
  DegenerateReshape result;
  const int64_t n = from.rank(), m = to.rank();
  int64_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && from.dimensions(i) == to.dimensions(j)) {
      ++i;
      ++j;
    } else if (i < n && from.dimensions(i) == 1) {
      result.deleted.push_back(i++);
    } else if (j < m && to.dimensions(j) == 1) {
      result.inserted.push_back(j++);
    } else {
      return std::nullopt;
    }
  }
  return result;
}

namespace {

// Linear index of `index` in memory (by the layout).
int64_t PhysicalIndex(const Shape& shape, const std::vector<int64_t>& index) {
  int64_t linear = 0;
  int64_t stride = 1;
  for (int64_t d : MinorToMajor(shape)) {
    linear += index[d] * stride;
    stride *= shape.dimensions(d);
  }
  return linear;
}

// Row-major multi-index of `linear` in `shape`.
std::vector<int64_t> LogicalIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    index[d] = linear % shape.dimensions(d);
    linear /= shape.dimensions(d);
  }
  return index;
}

int64_t RowMajorStride(const Shape& shape, int64_t dim) {
  int64_t stride = 1;
  for (int64_t d = shape.rank() - 1; d > dim; --d) stride *= shape.dimensions(d);
  return stride;
}

// A step of one along each dimension of `from` lands, read as `to`, on the
// same place in memory.
bool UnitStepsAgree(const Shape& from, const Shape& to) {
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dimensions(d) <= 1) continue;
    std::vector<int64_t> unit(from.rank(), 0);
    unit[d] = 1;
    std::vector<int64_t> mapped = LogicalIndex(to, RowMajorStride(from, d));
    if (PhysicalIndex(from, unit) != PhysicalIndex(to, mapped)) return false;
  }
  return true;
}

}  // namespace

bool ReshapeIsBitcast(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.ElementCount() != b.ElementCount()) return false;
  if (a.ElementCount() <= 1) return true;
  return UnitStepsAgree(a, b) && UnitStepsAgree(b, a);
}

}  // namespace hlogym
