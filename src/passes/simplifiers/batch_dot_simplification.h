// batch-dot-simplification: XLA's BatchDotSimplification. A dot whose lhs
// and rhs batch dimensions are the same leading dims 0..b-1 and that has one
// contracting dimension loses its size-1 batch dimensions:
//   dot(a, b) -> reshape(dot(reshape(a), reshape(b))) with the degenerate
//   batch dims elided from both operands and the dimension numbers shifted.
// Leaves out nothing of XLA's pass (dots with other batch layouts or several
// or no contracting dims are left alone, as in XLA).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_BATCH_DOT_SIMPLIFICATION_H_
#define HLOGYM_PASSES_SIMPLIFIERS_BATCH_DOT_SIMPLIFICATION_H_

#include "passes/pass.h"

namespace hlogym {

class BatchDotSimplification : public Pass {
 public:
  std::string_view name() const override { return "batch-dot-simplification"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_BATCH_DOT_SIMPLIFICATION_H_
