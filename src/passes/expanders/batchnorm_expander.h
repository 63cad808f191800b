// batchnorm_expander: XLA's BatchNormExpander, configured as XLA's CPU
// compiler does (rewrite_training_op, rewrite_inference_op and
// rewrite_grad_op all on).
//
// Implements, with N the element count per feature computed at run time
// (get-dimension-size of every non-feature dimension, multiplied in s32 and
// converted), reductions over the non-feature dimensions with a new scalar
// add computation per instruction, and feature vectors broadcast along
// feature_index:
//  - batch-norm-training: mean = sum(x) / N, var = sum(x*x) / N - mean^2,
//    out = (x - mean) * rsqrt(var + eps) * scale + offset; tuple(out, mean, var);
//  - batch-norm-inference: s = scale * rsqrt(var + eps),
//    out = x * s + (offset - mean * s);
//  - batch-norm-grad: grad_scale = sum(dy * (x - mean)) * rsqrt(var + eps),
//    grad_offset = sum(dy), grad_x = scale * rsqrt(var + eps) / N *
//    (N * dy - sum(dy) - (x - mean) * sum(dy * (x - mean)) / (var + eps)).
// Leaves out: sharding propagation onto the new instructions (hlogym keeps
// sharding as an unmodelled attribute; the new instructions get none).
#ifndef HLOGYM_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class BatchNormExpander : public Pass {
 public:
  std::string_view name() const override { return "batchnorm_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_BATCHNORM_EXPANDER_H_
