// conditional-canonicalizer: XLA's ConditionalCanonicalizer.
//
// Implements: a conditional whose result is not a tuple gets tuple-shaped
// branches (each branch root r becomes tuple(r)) and a one-element tuple
// result; its users read element 0. Branches that another instruction also
// calls are copied first so that only this conditional's branches change.
// Leaves out: nothing of XLA's pass.
#ifndef HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_CANONICALIZER_H_
#define HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_CANONICALIZER_H_

#include "passes/pass.h"

namespace hlogym {

class ConditionalCanonicalizer : public Pass {
 public:
  std::string_view name() const override { return "conditional-canonicalizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_CANONICALIZER_H_
