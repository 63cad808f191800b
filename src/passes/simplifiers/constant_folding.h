// constant_folding: XLA's HloConstantFolding at its default level (the one
// the CPU pipeline runs), using hlogym's evaluator.
//
// Implements: in every computation, in post order, an instruction whose
// operands are all constants, broadcasts of constants or iotas (looking
// through tuples), at least one of them a constant, is evaluated and
// replaced by a constant of the result; the instruction and operands it
// leaves dead are removed. Not folded, as in XLA: parameters, constants,
// tuples, broadcasts, iotas, fft, while loops, instructions with side
// effects (also through called computations), control dependencies, or
// calling computations that contain rng/after-all or anything unfoldable,
// pad(broadcast, constant), and results or operands over 45M elements.
// hlogym additionally skips instructions reading an elided constant
// (`constant({...})`, value unknown), custom calls, collectives and
// rng-bit-generator (XLA's evaluator cannot evaluate them, so XLA leaves
// them too), and anything the evaluator reports it cannot evaluate.
// Leaves out: the aggressive level (while-loop folding).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_CONSTANT_FOLDING_H_
#define HLOGYM_PASSES_SIMPLIFIERS_CONSTANT_FOLDING_H_

#include "passes/pass.h"

namespace hlogym {

class HloConstantFolding : public Pass {
 public:
  std::string_view name() const override { return "constant_folding"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_CONSTANT_FOLDING_H_
