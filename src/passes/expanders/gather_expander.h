// gather_expander: XLA's GatherExpander.
//
// Implements: a gather whose slice sizes are the whole operand becomes
// reshape (dropping the collapsed dimensions) + broadcast along the offset
// dimensions. Any other gather becomes a counted while loop: the start
// indices are canonicalized to [N] or [N, K] (index vector dimension moved
// last by a transpose, batch dimensions collapsed by a reshape, a leading
// dimension of 1 added when there is a single index); each iteration
// dynamic-slices one index vector, builds the operand start (index
// components per start_index_map, zero elsewhere), dynamic-slices the
// operand, drops the collapsed dimensions and dynamic-update-slices the
// slice into row i of an [N, offset sizes...] accumulator (zero-initialized
// by a broadcast); after the loop the accumulator is reshaped to the batch
// dimensions and transposed into the output order.
// Modes: "gather_expander" is XLA's kEliminateSimpleGathers (what the CPU
// and GPU pipelines run): only gathers with one index (trip count 1) or
// whole-operand slices; "gather_expander-all" is kEliminateAllGathers.
// Gathers with zero-element results are left to zero_sized_hlo_elimination,
// as in XLA.
// Built as XLA builds it, unused pieces included (the zero index vector,
// the loop's placeholder roots), so the op counts match XLA's output; only
// identity transposes are not emitted (XLA's output has none either).
// Leaves out: gathers with operand_batching_dims (XLA runs
// batched_gather_scatter_normalizer first); they are left alone.
#ifndef HLOGYM_PASSES_EXPANDERS_GATHER_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_GATHER_EXPANDER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

class GatherExpander : public Pass {
 public:
  enum class Mode { kEliminateAllGathers, kEliminateSimpleGathers };
  explicit GatherExpander(Mode mode, std::string name = "gather_expander")
      : mode_(mode), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  Mode mode_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_GATHER_EXPANDER_H_
