// simplify-conditional: XLA's ConditionalSimplifier, removal of
// conditionals (TryRemoveConditional).
//
// Implements, for every conditional without control edges and without side
// effects in its branches (in module order):
//  - a single-branch conditional, or one whose selector is a constant
//    (pred: true runs branch 0; index: out of range runs the last branch),
//    is replaced by an inlined copy of the branch it runs;
//  - a two-branch conditional with a scalar pred selector whose branches are
//    cheap (only broadcast, concatenate, dynamic-slice, get-tuple-element,
//    reduce, reshape, pad, parameter, slice, tuple, constants and
//    elementwise ops) is replaced by both branches inlined and a select of
//    their results (element by element through tuples).
// Leaves out: removing unused branch operands and unused result tuple
// elements, merging duplicate result elements, replacing unused roots by an
// empty tuple.
#ifndef HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_SIMPLIFIER_H_
#define HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class ConditionalSimplifier : public Pass {
 public:
  std::string_view name() const override { return "simplify-conditional"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

// Replaces a two-branch conditional with a pred selector by both branches
// inlined and a select of their results; false (nothing done) when the
// conditional does not have that form or a result holds a token.
absl::StatusOr<bool> ConvertConditionalToSelect(Instruction* conditional);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_CONDITIONAL_SIMPLIFIER_H_
