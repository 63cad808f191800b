// Helpers shared by the gather/scatter simplifiers and expanders: the reshapes
// and transposes that bring indices and operands into canonical form, and the
// index counting the expanders' loops need.
#ifndef HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_
#define HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_

#include <cstdint>
#include <span>
#include <vector>

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
// Reshape dropping the given size-1 dims.
absl::StatusOr<Instruction*> ElideDegenerateDims(Instruction* operand,
                                                 std::span<const int64_t> dims);
// Reshape merging the first n dims into one.
absl::StatusOr<Instruction*> CollapseFirstNDims(Instruction* operand, int64_t n);
// Reshape splitting dim 0 into `dims`.
absl::StatusOr<Instruction*> ExpandFirstDimIntoNDims(Instruction* operand,
                                                     std::span<const int64_t> dims);
// Indices made two-dimensional [batch, index vector] with the index vector
// last (XLA's TransformStartIndices).
absl::StatusOr<Instruction*> TransformStartIndices(Instruction* indices, int64_t index_vector_dim);

// start_indices as [N] (scalar indices, index_vector_dim == rank) or [N, K]:
// the index vector moved last by a transpose (none for the identity), then
// the other dimensions collapsed. XLA's gather expander emits the collapsing
// reshape even when it keeps the shape (always_reshape), its scatter
// expander does not.
absl::StatusOr<Instruction*> CanonicalIndices(Instruction* indices, int64_t index_vector_dim,
                                              bool always_reshape);

// How many index vectors `indices` holds: the product of its dimensions other
// than index_vector_dim (the trip count of an expander's loop).
int64_t IndexVectorCount(const Shape& indices, int64_t index_vector_dim);

}  // namespace hlogym::gather_scatter

#endif  // HLOGYM_PASSES_EXPANDERS_GATHER_SCATTER_UTILS_H_
