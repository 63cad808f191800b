// conditional-canonicalizer: XLA's ConditionalCanonicalizer.
//
// Implements: every conditional ends with tuples on all its edges. A branch
// parameter that is not a tuple becomes a one-element tuple that the branch
// reads element 0 of; a branch root r that is not a tuple becomes tuple(r);
// each operand but the branch index that is not a tuple is passed as
// tuple(operand); a result that is not a tuple becomes a one-element tuple
// whose users read element 0. A branch that something other than a
// conditional also calls is copied first; branches only conditionals share
// are rewritten once, in place.
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
