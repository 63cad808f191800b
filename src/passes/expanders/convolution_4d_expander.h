// convolution_4d_expander: XLA's Convolution4DExpander (GPU). A convolution
// with exactly four spatial dimensions of which at least one is trivial (an
// input spatial dimension of size 1 with no low or high padding) loses its
// trivial spatial dimensions: the input, the kernel and the result drop
// them through reshapes, the window and the dimension numbers drop the
// matching entries (remaining dimension indices are renumbered), and a
// reshape of the lower-rank convolution restores the original result shape.
// All trivial dimensions go at once, down to zero spatial dimensions.
// Differences from XLA: a dimension also counts as trivial only when its
// window size is 1 (with an input of size 1 and no padding, a larger window
// makes that output dimension empty, and dropping it could not be undone by
// a reshape; XLA would build an invalid reshape there), and convolutions
// with dynamic dimensions are left alone.
// Layouts: the new reshapes and convolution get the default layout when the
// operand they are built from has one, none otherwise; the final reshape
// keeps the original result's shape, layout included.
#ifndef HLOGYM_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class Convolution4DExpander : public Pass {
 public:
  std::string_view name() const override { return "convolution_4d_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CONVOLUTION_4D_EXPANDER_H_
