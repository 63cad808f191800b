// simplify-while-loops: XLA's WhileLoopSimplifier with the options the CPU
// pipeline uses (simplify_compare_instrs off).
//
// Implements, for every while loop (in module order), in this order (XLA's,
// as its pass dumps show: the dead elements go before constants propagate);
// as in XLA, a loop that the first three or loop removal changed waits for
// the next run (the pipeline's fixed point) for the rest:
//  - repeated elements (TryRemoveRepeatedWhileTupleIndices, first kind):
//    elements the body passes through unchanged whose init is the same
//    instruction hold the same value; the body and condition read the
//    lowest-indexed one, the loop's users the init value, and the others go
//    dead (TensorFlow's gradient loops carry a dozen copies of a size);
//  - nested loop state (TryFlattenNestedTuples): a state with tuples inside
//    (TensorFlow's TensorLists are (array, size) pairs) becomes the flat
//    tuple of its leaves, read back in the body, condition and users through
//    rebuilt nested tuples that tuple-simplifier folds;
//  - dead tuple elements (TryRemoveDeadWhileParams): elements that neither
//    the condition, nor the loop's users (all get-tuple-elements), nor the
//    live elements of the body's root need, computed to a fixed point, are
//    removed from the loop state, also in loops with side effects (as in
//    XLA, the elements a side-effecting instruction reads stay, and so does
//    the instruction; optimization barriers, add-dependency and after-all
//    are no side effect to XLA, so rematerialized loops narrow too); the
//    loop gets a narrower init tuple, body
//    and condition (edited in place, or first copied when another
//    instruction also calls them), and instructions of the body and
//    condition that no longer reach the root go with them. As in XLA, the
//    old loop's users then read a full-width tuple of the new loop's
//    elements and, for the dead ones, the old init value's; the pipeline's
//    tuple-simplifier and dce remove it;
//  - constant elements: a tuple element the body passes through unchanged
//    whose initial value (an operand of the init tuple) is a scalar constant
//    is replaced by a copy of that constant in the body (at every
//    get-tuple-element of it) and the condition, and
//    by the constant itself where the loop's result element is read
//    (TryPropagateConstant / TryRemoveConstantParams); the element is then
//    dead and goes in the next run;
//  - loops with a known trip count of 0 are replaced by their init value,
//    loops with a trip count of 1 by an inlined copy of the body applied to
//    the init value (the trip count as XLA's while_loop_analysis finds it:
//    closed form for `i = c; i < n; i += s` loops, else at most 128 steps of
//    a constant-started induction variable), never when the loop or what it
//    calls has a side effect or the loop has control edges;
//  - a loop with no users and no side effects is removed;
//  - induction variables (TryMergeInductionVariables, for s8, u8, s32, u32,
//    s64 and u64): with a trip counter (init constant 0, +1 per iteration),
//    every other element that adds a constant step per iteration stops
//    changing and is read as its value + counter * step; constant
//    propagation, dead-element removal and algsimp then fold it away.
// Leaves out: repeated elements updated by identical dynamic-update-slices,
// adding a trip counter to a loop that has none (XLA does, when two other
// elements step), the trivial-compare simplification (off on CPU), and loops
// whose body root is not a tuple or whose parameter is used other than by
// get-tuple-element (for the element-wise rewrites).
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_SIMPLIFIER_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class WhileLoopSimplifier : public Pass {
 public:
  std::string_view name() const override { return "simplify-while-loops"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_SIMPLIFIER_H_
