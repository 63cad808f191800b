// convolution-pred-expander: XLA's ConvolutionPredExpander (GPU). A
// convolution whose operands and result are all PRED is computed in F16:
// both operands are converted to F16, the convolution (same window,
// dimension numbers, group counts and other attributes) produces F16, and a
// convert back to PRED gives the original result. A sum of 0/1 products is
// nonzero exactly when some product is 1, so the result is the same (an F16
// overflow gives inf, which still converts to true).
// Leaves out: nothing of XLA's rewrite. Convolutions with PRED operands but
// another result type (or mixed operand types) are left alone, as XLA does.
// Layouts: the new convolution keeps the original result's shape (with its
// layout, if any); the converts get the default layout when their operand
// has one, none otherwise.
#ifndef HLOGYM_PASSES_EXPANDERS_CONVOLUTION_PRED_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_CONVOLUTION_PRED_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class ConvolutionPredExpander : public Pass {
 public:
  std::string_view name() const override { return "convolution-pred-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CONVOLUTION_PRED_EXPANDER_H_
