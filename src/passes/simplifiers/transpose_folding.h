// transpose-folding: XLA's TransposeFolding with the CPU compiler's
// callbacks. A transpose feeding a dot is folded into the dot's dimension
// numbers:
//   dot(transpose(a), b) -> dot(a, b) with lhs batch/contracting dims
//   mapped through the permutation (likewise for the rhs).
// Implements the CPU rule for which operands fold: both dot operands have
// rank >= 2, the operand is a non-identity transpose, the dot has one
// contracting dimension on that side, its batch dimensions are all but two
// of the operand's dimensions and the transpose leaves each of them in
// place (XLA's IsRowColumnTransposeDotOperand). With XLA's default CPU
// options (multi-threaded Eigen) every dot strategy the CPU backend picks
// accepts transposed operands, so that rule is the whole condition.
// Leaves out: convolutions (the CPU pipeline passes NeverFoldTranspose) and
// other backends' callbacks.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
#define HLOGYM_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_

#include "passes/pass.h"

namespace hlogym {

class TransposeFolding : public Pass {
 public:
  std::string_view name() const override { return "transpose-folding"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_TRANSPOSE_FOLDING_H_
