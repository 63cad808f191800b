// all-gather-optimizer: XLA's AllGatherOptimizer (GPU compiler,
// collective-optimizations).
//
// Implements: op(all-gather(a), all-gather(b)) -> all-gather(op(a, b)) for a
// commutative binary op (add, multiply, maximum, minimum, and, or, xor) in a
// computation that is not a fusion body, when the two all-gathers each have
// one operand and one user, operands of equal shape, and agree on
// constrain_layout, use_global_device_ids, replica groups and
// backend_config. The new all-gather has the first one's shape, channel_id,
// replica groups, use_global_device_ids and backend_config, the second one's
// all-gather dimension, no constrain_layout, and op's metadata.
// Leaves out: parsing GPU backend configs (they are compared as text, so
// configs differing only in is_pipelined / is_spmd_generated are not merged),
// and the collective group key of newer XLA.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_OPTIMIZER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_OPTIMIZER_H_

#include "passes/pass.h"

namespace hlogym {

class AllGatherOptimizer : public Pass {
 public:
  std::string_view name() const override { return "all-gather-optimizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_OPTIMIZER_H_
