// scatter_simplifier: XLA's ScatterSimplifier with the options the CPU
// pipeline uses (no operand reordering for coalescing). Rewrites every
// scatter not already in the simplified form
//   index_vector_dim last in the indices, at most one scatter dimension in
//   the updates and it comes first, sorted update_window_dims, no
//   inserted_window_dims
// into that form: indices made [N, K] (index vector last, batch dims
// flattened), each update transposed so its scatter dims lead, flattened to
// one scatter dim (or given one), and given size-1 dims where the operand
// had inserted window dims; the new scatter has update_window_dims={1..rank}
// and the original scatter_dims_to_operand_dims.
// A scatter into a rank-0 operand with scalar updates becomes an inlined
// copy of its combiner applied to (operands..., updates...).
// Leaves out: scatters with batching dims (XLA's CPU pipeline normalizes
// those first, in batched_gather_scatter_normalizer, not implemented here),
// rank-0 scatters with non-scalar updates, and the GPU option that reorders
// operand dimensions for coalescing.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class ScatterSimplifier : public Pass {
 public:
  std::string_view name() const override { return "scatter_simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SIMPLIFIER_H_
