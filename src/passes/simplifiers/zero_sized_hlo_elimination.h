// zero_sized_hlo_elimination: XLA's ZeroSizedHloElimination.
//
// Implements: every array-shaped instruction with zero elements and a
// static shape (other than constants, parameters, instructions with side
// effects or control dependencies) is replaced by an empty constant of its
// shape (default layout when it had none); operands left dead are removed.
// A zero-element parameter without control dependencies that something
// reads stays, its readers taking such a constant instead.
// Leaves out nothing of note (fusion computations are visited too, which
// the CPU pipeline never has at this point).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_
#define HLOGYM_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_

#include "passes/pass.h"

namespace hlogym {

class ZeroSizedHloElimination : public Pass {
 public:
  std::string_view name() const override { return "zero_sized_hlo_elimination"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_ZERO_SIZED_HLO_ELIMINATION_H_
