// gemv-rewriter: XLA's GemvRewriter (matrix-vector dots as matrix-matrix
// dots).
//
// Implements: a dot where exactly one operand has no non-contracting
// dimension (after dot_decomposer each operand has at most one) gets a
// trailing size-1 dimension on that operand (a reshape; XLA uses a bitcast), is computed as a
// matrix-matrix dot whose result has the matching size-1 dimension (before
// the rhs non-contracting dimension when the lhs was the vector, last
// otherwise), and a reshape gives back the original shape. Matrix-matrix,
// vector-vector and dynamic-shaped dots are left alone. Leaves out: XLA
// rejects a module whose layouts are not descending; hlogym leaves such dots
// unchanged instead.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_

#include "passes/pass.h"

namespace hlogym {

class GemvRewriter : public Pass {
 public:
  std::string_view name() const override { return "gemv-rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_GEMV_REWRITER_H_
