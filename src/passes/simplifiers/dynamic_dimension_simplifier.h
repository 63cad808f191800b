// dynamic-dimension-simplifier: XLA's DynamicDimensionSimplifier, the small
// cleanups XLA runs on the shape arithmetic dynamic dimensions leave behind.
//
// Implements, as separate sweeps over every computation in post order:
// concatenate(concatenate(a, b), c) on the same dimension -> one
// concatenate(a, b, c) (the inner one removed when left unused); a rank-1
// slice [s:s+n] of a concatenate whose operand starting at s has n elements
// -> that operand; reshape-to-scalar of a broadcast of a scalar into [1] ->
// the scalar; reshape(reshape(a)) with a's shape -> a; convert and reshape
// to the operand's own shape -> the operand. As in XLA, forwarded
// instructions are left for dce, so the op count often stays the same.
// Leaves out: nothing of XLA's pass; unlike XLA it reports no change for
// forwarding an instruction that has no users (which changes nothing).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_DYNAMIC_DIMENSION_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_DYNAMIC_DIMENSION_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class DynamicDimensionSimplifier : public Pass {
 public:
  std::string_view name() const override { return "dynamic-dimension-simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_DYNAMIC_DIMENSION_SIMPLIFIER_H_
