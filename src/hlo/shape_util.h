// Shape, permutation and reshape utilities shared by the passes, the
// evaluator and the analyses (the part of XLA's ShapeUtil and permutation_util
// that hlogym needs). Shape equality itself is Shape::Equal.
#ifndef HLOGYM_HLO_SHAPE_UTIL_H_
#define HLOGYM_HLO_SHAPE_UTIL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hlo/primitive_type.h"
#include "hlo/shape.h"

namespace hlogym {

bool IsZeroElementArray(const Shape& shape);
// A new array shape, with the default layout when `like` has a layout.
Shape MakeShapeLike(PrimitiveType type, std::vector<int64_t> dims, const Shape& like);
Shape ChangeElementType(const Shape& shape, PrimitiveType type);

// The dimensions in memory order, minor to major: the layout's, or the
// default (descending) when the shape has none or one of another rank.
std::vector<int64_t> MinorToMajor(const Shape& shape);
// The same order, major to minor (outermost first).
std::vector<int64_t> MajorToMinor(const Shape& shape);
// `shape` with a layout of this minor-to-major order (and no tiling or other
// layout details).
Shape WithMinorToMajor(const Shape& shape, std::vector<int64_t> minor_to_major);

// inverse[perm[i]] = i.
std::vector<int64_t> InversePermutation(std::span<const int64_t> perm);
// perm[i] = i for every i (true for the empty permutation).
bool IsIdentityPermutation(std::span<const int64_t> perm);
bool IsSortedDims(std::span<const int64_t> dims);

// The groups of dimensions a reshape maps onto each other: input dims
// [a_begin, a_end) hold the same elements as output dims [b_begin, b_end).
// Degenerate (size-1) dims that are only inserted or deleted form groups
// with one empty side. nullopt if the element counts differ.
struct ReshapeGroup {
  int64_t a_begin, a_end, b_begin, b_end;
};
std::optional<std::vector<ReshapeGroup>> ReshapeGroups(std::span<const int64_t> a,
                                                       std::span<const int64_t> b);
// XLA's ShapeUtil::ReshapeIsBitcast: the reshape from `from` to `to` moves
// no element in memory under their layouts (the default where absent).
bool ReshapeIsBitcast(const Shape& from, const Shape& to);
// Pairs (input dim, output dim) a reshape leaves unchanged.
std::vector<std::pair<int64_t, int64_t>> DimensionsUnmodifiedByReshape(const Shape& from,
                                                                       const Shape& to);
// The output dims of `input_dims` when all of them are unmodified, else nullopt.
std::optional<std::vector<int64_t>> ReshapeLeavesDimensionsUnmodified(
    const Shape& from, const Shape& to, std::span<const int64_t> input_dims);
// When the reshape only inserts and/or deletes size-1 dimensions: the
// deleted input dims and the inserted output dims.
struct DegenerateReshape {
  std::vector<int64_t> deleted;
  std::vector<int64_t> inserted;
};
std::optional<DegenerateReshape> ReshapeMerelyInsertsOrDeletes1SizedDimensions(const Shape& from,
                                                                               const Shape& to);

}  // namespace hlogym

#endif  // HLOGYM_HLO_SHAPE_UTIL_H_
