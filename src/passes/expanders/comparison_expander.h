// comparison-expander: XLA's ComparisonExpander with the CPU pipeline's
// options.
//
// Implements: a floating-point compare with type=TOTALORDER becomes an
// integer compare of order-preserving keys: each operand is
// bitcast-converted to the signed integer type of its width, and negative
// patterns are mapped through xor(INT_MAX, bits) so that integer order is
// the total order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN); the
// zero and INT_MAX constants are always broadcast to the operand shape (a
// scalar broadcast too), and, as in XLA, an unused broadcast INT_MIN
// constant is left behind, so op counts match XLA's. Applies in every computation (sort comparators
// included). Leaves out: the expand-via-upcast pairs for narrow float types (f8/f4), which the CPU
// pipeline only asks for on types the corpus does not use.
#ifndef HLOGYM_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class ComparisonExpander : public Pass {
 public:
  std::string_view name() const override { return "comparison-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_COMPARISON_EXPANDER_H_
