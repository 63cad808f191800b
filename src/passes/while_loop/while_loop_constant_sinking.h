// while-loop-constant-sinking: XLA's WhileLoopConstantSinking with the CPU
// pipeline's options (sink_broadcast_of_constants=false,
// sink_only_scalar_constants=false).
//
// Implements: for every while loop whose init is a tuple instruction, each
// element the body passes through unchanged and whose initial value is a
// constant gets a copy of that constant ("<name>.sunk") inside the body,
// which replaces every use of the element there except the root's
// pass-through, and inside the condition, which replaces every read of the
// element. The loop state itself is left as it is (simplify-while-loops
// then drops the element when nothing else needs it). As the pinned XLA's
// pass dumps show, the constants sink into a fresh copy of the body or
// condition they change ("<name>.sunk"), which the loop then calls (the
// original goes when nothing else calls it), and a read in the condition
// whose uses the constant took goes too.
// Leaves out: sinking broadcasts of constants and the scalar-only mode
// (both off on CPU).
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_CONSTANT_SINKING_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_CONSTANT_SINKING_H_

#include "passes/pass.h"

namespace hlogym {

class WhileLoopConstantSinking : public Pass {
 public:
  std::string_view name() const override { return "while-loop-constant-sinking"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_CONSTANT_SINKING_H_
