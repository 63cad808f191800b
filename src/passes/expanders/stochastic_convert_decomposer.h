// stochastic_convert_decomposer: XLA's StochasticConvertDecomposer.
//
// Implements: stochastic-convert(x, random) from a float type to a signed
// integer type, as elementwise ops: the magnitude is truncated, and rounded
// up when the unsigned random bits are below the fractional part scaled to
// 2^bits(random) (computed in f32 for f16 inputs, whose range cannot hold the
// scale); the sign is put back, and inputs at or beyond the integer type's
// minimum / maximum give that minimum / maximum.
// Leaves out: conversions to float or unsigned types, which XLA does not
// decompose either; the pass fails with Unimplemented on them.
#ifndef HLOGYM_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_
#define HLOGYM_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_

#include "passes/pass.h"

namespace hlogym {

class StochasticConvertDecomposer : public Pass {
 public:
  std::string_view name() const override { return "stochastic_convert_decomposer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_STOCHASTIC_CONVERT_DECOMPOSER_H_
