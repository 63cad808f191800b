// while-loop-invariant-code-motion: XLA's WhileLoopInvariantCodeMotion with
// the CPU pipeline's options (hoist_constants=false, hoist_reshapes=false,
// hoist_other=true, no size-inflation limit).
//
// Implements: in every while body whose root is a tuple, an instruction
// whose operands are all loop invariant (elements the body passes through
// unchanged, constants, or instructions already found invariant) and that
// has no side effect (itself or through what it calls) and no control edges
// is hoisted: a copy is made before the loop, fed from the loop's init
// value, and the body reads it from a new element appended to the loop
// state (WhileUtil::MakeInstructionsLiveIn: one get-tuple-element for the
// body's uses and another that passes the element through to the root, as
// XLA leaves them for CSE). Constants, reshapes, bitcasts,
// broadcasts, iotas, reverses, slices, transposes, tuples and "Sharding"
// custom calls are not hoisted on their own, only along with a hoisted user
// that needs them. Body and condition are edited in place (copied first
// when another instruction calls them); the body's now-dead instructions go.
// Leaves out: hoisting from the condition (XLA does not either), the size
// inflation limit (unset on CPU), and loops whose body root is not a tuple.
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include "passes/pass.h"

namespace hlogym {

class WhileLoopInvariantCodeMotion : public Pass {
 public:
  std::string_view name() const override { return "while-loop-invariant-code-motion"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
