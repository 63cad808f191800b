// batched_gather_scatter_normalizer: XLA's BatchedGatherScatterNormalizer.
//
// Implements: a gather with operand_batching_dims (a scatter with
// input_batching_dims) becomes one without them. For each batching dimension
// an s32-or-wider iota over the index array (counting along that index
// batching dimension, size 1 in the index vector dimension) is concatenated in
// front of the start indices along index_vector_dim (the indices are first
// reshaped to get a trailing index vector dimension when they have none, and
// converted to s32/s64 when a batching size does not fit their integer type);
// the batching dimensions move to the front of start_index_map
// (scatter_dims_to_operand_dims) and join collapsed_slice_dims
// (inserted_window_dims); indices_are_sorted survives only when the new index
// map is sorted. Leaves out: nothing of XLA's pass.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_BATCHED_GATHER_SCATTER_NORMALIZER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_BATCHED_GATHER_SCATTER_NORMALIZER_H_

#include "passes/pass.h"

namespace hlogym {

class BatchedGatherScatterNormalizer : public Pass {
 public:
  std::string_view name() const override { return "batched_gather_scatter_normalizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_BATCHED_GATHER_SCATTER_NORMALIZER_H_
