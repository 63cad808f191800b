// simplify-conditional: XLA's ConditionalSimplifier, removal of
// conditionals (TryRemoveConditional).
//
// Implements, for every conditional (in module order), as XLA does:
//  - result elements every branch computes with the same instruction merge
//    (their readers read the first), when every user reads one element;
//  - result elements nothing reads go: each branch is replaced by a copy
//    whose root is a tuple of the read elements (the old branches stay for
//    dce, as in XLA); a conditional nothing reads returns an empty tuple;
//  - then, for conditionals without control edges and without side effects
//    in their branches: a single-branch conditional, or one whose selector
//    is a constant (pred: true runs branch 0; index: out of range runs the
//    last branch), is replaced by an inlined copy of the branch it runs;
//    a two-branch conditional with a scalar pred selector whose branches are
//    cheap (only broadcast, concatenate, dynamic-slice, get-tuple-element,
//    reduce, reshape, pad, parameter, slice, tuple, constants and
//    elementwise ops) is replaced by both branches inlined and a select of
//    their results (element by element through tuples), unless a branch is
//    empty (only its parameter, tuples and get-tuple-elements);
//  - last, for the conditionals kept: a branch's parameter elements it never
//    reads go (a copy of the branch with a narrower parameter, and a tuple of
//    the read elements as the operand of every conditional that calls it).
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
