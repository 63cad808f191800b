#include "passes/expanders/gather_scatter_utils.h"

#include <algorithm>

#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym::gather_scatter {

absl::StatusOr<Instruction*> MaybeTranspose(Instruction* operand,
                                            std::span<const int64_t> permutation) {
  if (IsIdentityPermutation(permutation)) return operand;
  return MakeTranspose(operand, permutation);
}

absl::StatusOr<Instruction*> ReshapeTo(Instruction* operand, std::vector<int64_t> dims) {
  return MakeReshape(operand, dims);
}

absl::StatusOr<Instruction*> InsertDegenerateDims(Instruction* operand,
                                                  std::span<const int64_t> positions) {
  std::vector<int64_t> dims;
  const std::vector<int64_t>& old = operand->shape().dimensions();
  size_t next = 0;
  int64_t rank = static_cast<int64_t>(old.size() + positions.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(positions.begin(), positions.end(), i) != positions.end()) {
      dims.push_back(1);
    } else {
      dims.push_back(old[next++]);
    }
  }
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> ElideDegenerateDims(Instruction* operand,
                                                 std::span<const int64_t> elided) {
  std::vector<int64_t> dims;
  const std::vector<int64_t>& old = operand->shape().dimensions();
  for (int64_t i = 0; i < static_cast<int64_t>(old.size()); ++i) {
    if (std::find(elided.begin(), elided.end(), i) == elided.end()) dims.push_back(old[i]);
  }
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> CollapseFirstNDims(Instruction* operand, int64_t n) {
  const std::vector<int64_t>& old = operand->shape().dimensions();
  int64_t merged = 1;
  for (int64_t i = 0; i < n; ++i) merged *= old[i];
  std::vector<int64_t> dims = {merged};
  dims.insert(dims.end(), old.begin() + n, old.end());
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> ExpandFirstDimIntoNDims(Instruction* operand,
                                                     std::span<const int64_t> expanded) {
  const std::vector<int64_t>& old = operand->shape().dimensions();
  std::vector<int64_t> dims(expanded.begin(), expanded.end());
  dims.insert(dims.end(), old.begin() + 1, old.end());
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> TransformStartIndices(Instruction* indices, int64_t index_vector_dim) {
  int64_t rank = indices->shape().rank();
  if (index_vector_dim == rank) {
    const int64_t position[] = {index_vector_dim};
    auto made = InsertDegenerateDims(indices, position);
    if (!made.ok()) return made;
    indices = *made;
    ++rank;
  } else if (index_vector_dim < rank - 1) {
    std::vector<int64_t> permutation;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != index_vector_dim) permutation.push_back(i);
    }
    permutation.push_back(index_vector_dim);
    auto made = MaybeTranspose(indices, permutation);
    if (!made.ok()) return made;
    indices = *made;
  }
  if (rank > 2) return CollapseFirstNDims(indices, rank - 1);
  if (rank == 1) {
    const int64_t position[] = {0};
    return InsertDegenerateDims(indices, position);
  }
  return indices;
}

absl::StatusOr<Instruction*> CanonicalIndices(Instruction* indices, int64_t index_vector_dim,
                                              bool always_reshape) {
  const int64_t rank = indices->shape().rank();
  Instruction* transposed = indices;
  if (index_vector_dim < rank - 1) {
    std::vector<int64_t> permutation;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != index_vector_dim) permutation.push_back(i);
    }
    permutation.push_back(index_vector_dim);
    HLOGYM_ASSIGN(t, MakeTranspose(indices, permutation));
    transposed = t;
  }
  const int64_t index_dims = index_vector_dim == rank ? 0 : 1;
  const std::vector<int64_t>& dims = transposed->shape().dimensions();
  int64_t batch = 1;
  for (int64_t i = 0; i < rank - index_dims; ++i) batch *= dims[i];
  std::vector<int64_t> canonical = {batch};
  if (index_dims == 1) canonical.push_back(dims.back());
  if (!always_reshape && canonical == dims) return transposed;
  return MakeReshape(transposed, canonical);
}

int64_t IndexVectorCount(const Shape& indices, int64_t index_vector_dim) {
  int64_t count = 1;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != index_vector_dim) count *= indices.dimensions(i);
  }
  return count;
}

}  // namespace hlogym::gather_scatter
