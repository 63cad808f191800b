// while_loop_unroller: XLA's WhileLoopUnroller with its defaults (full
// unrolling, not wrapped in a trivial loop, thresholds: trip count <= 64,
// body <= 800 instructions, trip count x body size <= 10000).
//
// Implements: a while loop whose operand is a tuple instruction, whose
// condition has no side effect, that no instruction depends on through a
// control edge, and whose induction variable has a constant start, a
// constant step and a constant bound (the trivial-loop match also used by
// simplify-while-loops), with at least one iteration, is replaced by
// trip-count copies of its body chained on the loop state. In copy k every
// use of the induction variable except its increment reads the constant
// start + k * step. Callees before callers, so inner loops unroll first.
// When anything was unrolled, flatten-call-graph and call-inliner run
// over the module, as XLA does after unrolling.
// Leaves out: XLA's preparation step (scalar-only CSE, tuple simplification
// and constant sinking over the whole module before looking for loops), so
// loops that only become trivial after it are not unrolled and the pass
// never changes a module without unrolling; loops with send/recv or
// side-effecting instructions in the body; induction variables whose start
// is a constant expression rather than a constant.
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_UNROLLER_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_UNROLLER_H_

#include "passes/pass.h"

namespace hlogym {

class WhileLoopUnroller : public Pass {
 public:
  std::string_view name() const override { return "while_loop_unroller"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_UNROLLER_H_
