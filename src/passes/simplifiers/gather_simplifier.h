// gather_simplifier: XLA's GatherSimplifier. Rewrites every gather that is
// not already in the canonical form
//   indices s32[N, K] with index_vector_dim=1, start_index_map={0..K-1},
//   no collapsed_slice_dims, offset_dims={1..rank}
// into that form surrounded by transposes and reshapes:
//   operand transposed so the start_index_map dims come first; indices
//   moved/reshaped to [N, K]; the canonical gather; the operand transpose
//   undone on the slice dims; collapsed dims elided; the batch dim expanded
//   back to the indices' dims; offset dims moved to their places.
// A gather with a zero slice size becomes broadcast(0).
// Leaves out: gathers with operand/start-indices batching dims (XLA's CPU
// pipeline normalizes those away first, in batched_gather_scatter_normalizer,
// which hlogym does not implement yet); they are left unchanged.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class GatherSimplifier : public Pass {
 public:
  std::string_view name() const override { return "gather_simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_GATHER_SIMPLIFIER_H_
