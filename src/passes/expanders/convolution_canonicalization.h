// convolution-canonicalization: XLA's CPU ConvCanonicalization
// (xla/service/cpu/conv_canonicalization.cc).
//
// Implements: every convolution in the entry computation that XLA:CPU could
// not hand to Eigen (PotentiallyImplementedAsEigenConvolution: 1-3 spatial
// dimensions, no window reversal, input NHWC / kernel HWIO / output NHWC
// dimension numbers, f16 or f32 input, each of input, kernel and output
// larger than 8 bytes, Eigen's 16-byte alignment) is rewritten as
// transpose(input) to NHWC and transpose(kernel) to HWIO, a convolution with
// canonical dimension numbers (same window, groups, precision), and a
// transpose back to the original output dimension order. As in XLA the
// transposes are added even where a dimension order is already canonical
// (e.g. a bf16 convolution), to be folded by later simplification.
// Target dependence: the test is XLA:CPU's, its only machine parameter the
// 16-byte alignment that every CPU target XLA supports gives; the rewrite
// itself is plain HLO. Leaves out: convolutions outside the entry
// computation (XLA's pass does not visit them either).
#ifndef HLOGYM_PASSES_EXPANDERS_CONVOLUTION_CANONICALIZATION_H_
#define HLOGYM_PASSES_EXPANDERS_CONVOLUTION_CANONICALIZATION_H_

#include "passes/pass.h"

namespace hlogym {

class ConvolutionCanonicalization : public Pass {
 public:
  std::string_view name() const override { return "convolution-canonicalization"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CONVOLUTION_CANONICALIZATION_H_
