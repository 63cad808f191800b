// Helpers shared by the gather/scatter simplifiers and expanders: the reshapes
// and transposes that bring indices and operands into canonical form, and the
// index counting the expanders' loops need.
#ifndef HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_
#define HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/instruction.h"

namespace hlogym::gather_scatter {

// transpose(operand, permutation), or operand for the identity.
absl::StatusOr<Instruction*> MaybeTranspose(Instruction* operand,
                                            std::span<const int64_t> permutation);
// A reshape of `operand` to `dims` (always a new instruction).
absl::StatusOr<Instruction*> ReshapeTo(Instruction* operand, std::vector<int64_t> dims);
// Reshape inserting size-1 dims at the given result positions (sorted).
absl::StatusOr<Instruction*> InsertDegenerateDims(Instruction* operand,
                                                  std::span<const int64_t> positions);
// Reshape dropping the given size-1 dims; the others keep the operand's
// memory order (its layout without the dropped dims).
absl::StatusOr<Instruction*> ElideDegenerateDims(Instruction* operand,
                                                 std::span<const int64_t> dims);
// Reshape merging the first n dims into one.
absl::StatusOr<Instruction*> CollapseFirstNDims(Instruction* operand, int64_t n);
// Reshape splitting dim 0 into `dims`.
absl::StatusOr<Instruction*> ExpandFirstDimIntoNDims(Instruction* operand,
                                                     std::span<const int64_t> dims);
// `indices` with dimension index_vector_dim moved last by a transpose, or
// `indices` itself where it is last already or is past the end (scalar
// indices).
absl::StatusOr<Instruction*> IndexVectorLast(Instruction* indices, int64_t index_vector_dim);
// Indices made two-dimensional [batch, index vector] with the index vector
// last (XLA's TransformStartIndices).
absl::StatusOr<Instruction*> TransformStartIndices(Instruction* indices, int64_t index_vector_dim);

// The pieces of the expanders' loop bodies, built as XLA's builders build
// them (a vector start index becomes a slice and a reshape per component), so
// that the op counts after each pass match XLA's.

// The index vector `v` (rank 1) padded with `prepend` and `append` zeros.
absl::StatusOr<Instruction*> PadWithZeros(Instruction* v, int64_t prepend, int64_t append);
// dynamic-slice of `operand` at the start index vector `start`.
absl::StatusOr<Instruction*> DynamicSliceAt(Instruction* operand, Instruction* start,
                                            const std::vector<int64_t>& sizes);
// dynamic-update-slice of `update` into `operand` at the start index vector `start`.
absl::StatusOr<Instruction*> DynamicUpdateSliceAt(Instruction* operand, Instruction* update,
                                                  Instruction* start);
// Index vector number `i_vector` (the loop's induction variable broadcast to
// [1]) of canonical indices: [N] (one element each) or [N, K].
absl::StatusOr<Instruction*> IndexVectorAt(Instruction* indices, Instruction* i_vector);
// `index_vector` in operand space, a vector of operand_rank: component c at
// dimension dims_map[c], zero elsewhere (an empty vector for a scalar
// operand).
absl::StatusOr<Instruction*> IndexInOperandSpace(Instruction* index_vector,
                                                 std::span<const int64_t> dims_map,
                                                 int64_t operand_rank);

// On a loop of one iteration, XLA's gather and scatter expanders convert the induction
// variable `i` to the indices' element type and leave the convert unused (dead until dce);
// none where that type is s32 already. Adds it, so that the op counts match XLA's.
absl::Status AddUnusedIndexConvert(Instruction* i, PrimitiveType index_type, int64_t trip_count);

// How many index vectors `indices` holds: the product of its dimensions other
// than index_vector_dim (the trip count of an expander's loop).
int64_t IndexVectorCount(const Shape& indices, int64_t index_vector_dim);

}  // namespace hlogym::gather_scatter

#endif  // HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_
