// cholesky_expander: XLA's CholeskyExpander.
//
// Implements: every cholesky of a real floating-point (batched) square
// matrix becomes a call of a computation "xla.cholesky_<shape>_<lower|upper>"
// (one per shape and triangle, shared by all such calls in a run) holding
// XLA's blocked left-looking algorithm with block size 128, unrolled over
// the blocks: each diagonal block is factorized by a counted while loop over
// its columns (the unblocked Cholesky-Banachiewicz update with an iota mask
// and L*L^T as a batch dot), or by a square root for a 1x1 block; the panel
// below it is solved with a triangular-solve (right side, lower, adjoint)
// and later panels subtract the dot of the finished columns. Upper
// factorizations transpose the input and the result. If any diagonal square
// root is NaN (the matrix is not positive definite), the whole result is NaN.
// Leaves out: complex element types (their cholesky stays).
#ifndef HLOGYM_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class CholeskyExpander : public Pass {
 public:
  std::string_view name() const override { return "cholesky_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CHOLESKY_EXPANDER_H_
