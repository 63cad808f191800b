// all-gather-dynamic-slice-simplifier: XLA's AllGatherDynamicSliceSimplifier
// (GPU compiler, "collective-optimizations"), with its default configuration.
//
// Implements: a dynamic-slice whose operand is an array all-gather (one
// operand, one user, not constrain_layout) and that takes, along the
// all-gather's dimension, the shard the j-th device of each group contributed
// (collective_opt_utils.h lists the offsets and device ids recognized) is
// replaced by the all-gather's operand. The all-gather and the offset
// computation, left unused, are removed with it.
// Leaves out: the dynamic-slice(reshape(all-gather)) form XLA's default also
// accepts (hlogym lacks the unmodified-dimension analysis of reshapes).
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_DYNAMIC_SLICE_SIMPLIFIER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_DYNAMIC_SLICE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class AllGatherDynamicSliceSimplifier : public Pass {
 public:
  std::string_view name() const override { return "all-gather-dynamic-slice-simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_DYNAMIC_SLICE_SIMPLIFIER_H_
