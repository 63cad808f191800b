// cse_barrier_expander: XLA's OptimizationBarrierExpander.
//
// Implements: every opt-barrier is removed, its users (and the root) using
// its operand instead; the barrier's control dependencies move to the
// operand. Leaves out: schedule updates (hlogym modules carry no schedule).
#ifndef HLOGYM_PASSES_EXPANDERS_CSE_BARRIER_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_CSE_BARRIER_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class OptimizationBarrierExpander : public Pass {
 public:
  std::string_view name() const override { return "cse_barrier_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CSE_BARRIER_EXPANDER_H_
