// conditional-to-select: XLA's ConditionalToSelect.
//
// Implements: a conditional inside a computation called in an embedded
// context (the to_apply of map, reduce, sort, scatter, fusion, ... or
// anything such a computation calls) cannot branch when vectorized, so a
// two-branch conditional with a scalar pred selector and branches free of
// side effects is replaced by both branches inlined and a select of their
// results (element by element through tuples). Conditionals in the entry
// and in other control-flow computations are left alone.
// Leaves out: conditionals with an integer branch index.
#ifndef HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_TO_SELECT_H_
#define HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_TO_SELECT_H_

#include "passes/pass.h"

namespace hlogym {

class ConditionalToSelect : public Pass {
 public:
  std::string_view name() const override { return "conditional-to-select"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_TO_SELECT_H_
