// convolution-group-converter: XLA's ConvolutionGroupConverter as the CPU
// compiler configures it (no cost model, filter expansion on), in its two
// CPU instances:
// - "convolution-group-converter" (convert_batch_groups_only): every
//   convolution with batch_group_count G > 1. When the input batch and the
//   kernel output features both equal G, the convolution is computed for all
//   batch/feature pairs (batch_group_count 1, output batch G times larger),
//   the pairs of different groups are zeroed by a select with an iota-free
//   group mask (two broadcast s32 constants compared EQ), and a reduce-window
//   sum (in f32 for types narrower than 32 bits, then converted back) adds
//   the G slices of the output batch. Otherwise the input batch dimension is
//   split into [G, batch/G] and the kernel output feature dimension into
//   [G, features/G]; both group dimensions become a new spatial dimension
//   whose window (size G, base dilation G, stride G-1) pairs group i of the
//   input with group i of the kernel; the result is reshaped back.
// - "convolution-group-converter-feature-groups": convolutions with
//   feature_group_count G > 1 (and no batch groups) whose element type is not
//   F16 or F32 (XLA's CPU predicate). Depthwise ones (one input feature per
//   group) get an expanded filter: the filter broadcast over G input
//   features, masked to its group, under feature_group_count 1; others get
//   the split-into-a-spatial-dimension rewrite above on the input feature
//   dimension.
// Leaves out: the non-expansion paths used with a cost model (GPU), and
// depthwise convolutions when filter expansion is off; batch-group
// convolutions that also have feature groups are left alone in the masked
// form (XLA would drop the feature groups there).
#ifndef HLOGYM_PASSES_EXPANDERS_CONVOLUTION_GROUP_CONVERTER_H_
#define HLOGYM_PASSES_EXPANDERS_CONVOLUTION_GROUP_CONVERTER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

class ConvolutionGroupConverter : public Pass {
 public:
  // `batch_groups_only`: the first CPU instance; else the second one.
  explicit ConvolutionGroupConverter(bool batch_groups_only,
                                     std::string name = "convolution-group-converter")
      : batch_groups_only_(batch_groups_only), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  bool batch_groups_only_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_CONVOLUTION_GROUP_CONVERTER_H_
