#include "passes/expanders/convolution_canonicalization.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

// XLA:CPU gives buffers of more than 8 bytes at least the 16-byte alignment
// Eigen expects (the smallest power of two holding the buffer, capped).
bool EigenAligned(const Shape& shape) {
  int64_t elements = 1;
  for (int64_t d : shape.dimensions()) elements *= d;
  return elements * ByteWidth(shape.element_type()) > 8;
}

bool EigenCanRun(const Instruction& conv) {
  const ConvolutionDimensionNumbers& dnums = *conv.attrs().convolution_dimension_numbers;
  if (conv.attrs().window.has_value()) {
    for (const WindowDimension& dim : conv.attrs().window->dimensions) {
      if (dim.window_reversal) return false;
    }
  }
  const int64_t spatial = static_cast<int64_t>(dnums.output_spatial_dimensions.size());
  if (spatial < 1 || spatial > 3) return false;
  const Shape& input = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  const Shape& output = conv.shape();
  for (int64_t i = 0; i < spatial; ++i) {
    if (dnums.input_spatial_dimensions[i] != i + 1 || dnums.kernel_spatial_dimensions[i] != i ||
        dnums.output_spatial_dimensions[i] != i + 1) {
      return false;
    }
  }
  if (dnums.input_batch_dimension != 0 || dnums.input_feature_dimension != input.rank() - 1 ||
      dnums.output_batch_dimension != 0 || dnums.output_feature_dimension != output.rank() - 1 ||
      dnums.kernel_input_feature_dimension != kernel.rank() - 2 ||
      dnums.kernel_output_feature_dimension != kernel.rank() - 1) {
    return false;
  }
  if (!EigenAligned(output) || !EigenAligned(input) || !EigenAligned(kernel)) return false;
  const PrimitiveType type = input.element_type();
  return type == PrimitiveType::kF16 || type == PrimitiveType::kF32;
}

bool WellFormed(const Instruction& conv) {
  if (conv.operand_count() != 2 || !conv.attrs().convolution_dimension_numbers) return false;
  const ConvolutionDimensionNumbers& dnums = *conv.attrs().convolution_dimension_numbers;
  const size_t spatial = dnums.output_spatial_dimensions.size();
  const int64_t rank = static_cast<int64_t>(spatial) + 2;
  return dnums.input_spatial_dimensions.size() == spatial &&
         dnums.kernel_spatial_dimensions.size() == spatial && conv.operand(0)->shape().IsArray() &&
         conv.operand(0)->shape().rank() == rank && conv.operand(1)->shape().IsArray() &&
         conv.operand(1)->shape().rank() == rank && conv.shape().IsArray() &&
         conv.shape().rank() == rank;
}

absl::Status Canonicalize(Instruction* conv) {
  const ConvolutionDimensionNumbers& dnums = *conv->attrs().convolution_dimension_numbers;
  const int64_t spatial = static_cast<int64_t>(dnums.output_spatial_dimensions.size());
  std::vector<int64_t> input_order = {dnums.input_batch_dimension};
  std::vector<int64_t> kernel_order;
  std::vector<int64_t> output_order = {dnums.output_batch_dimension};
  for (int64_t i = 0; i < spatial; ++i) {
    input_order.push_back(dnums.input_spatial_dimensions[i]);
    kernel_order.push_back(dnums.kernel_spatial_dimensions[i]);
    output_order.push_back(dnums.output_spatial_dimensions[i]);
  }
  input_order.push_back(dnums.input_feature_dimension);
  kernel_order.push_back(dnums.kernel_input_feature_dimension);
  kernel_order.push_back(dnums.kernel_output_feature_dimension);
  output_order.push_back(dnums.output_feature_dimension);

  HLOGYM_ASSIGN(input, MakeTranspose(conv->operand(0), input_order));
  HLOGYM_ASSIGN(kernel, MakeTranspose(conv->operand(1), kernel_order));

  ConvolutionDimensionNumbers canonical;
  canonical.input_batch_dimension = 0;
  canonical.output_batch_dimension = 0;
  for (int64_t i = 0; i < spatial; ++i) {
    canonical.input_spatial_dimensions.push_back(i + 1);
    canonical.kernel_spatial_dimensions.push_back(i);
    canonical.output_spatial_dimensions.push_back(i + 1);
  }
  canonical.input_feature_dimension = spatial + 1;
  canonical.output_feature_dimension = spatial + 1;
  canonical.kernel_input_feature_dimension = spatial;
  canonical.kernel_output_feature_dimension = spatial + 1;

  std::vector<int64_t> conv_dims;
  for (int64_t d : output_order) conv_dims.push_back(conv->shape().dimensions(d));
  auto canonical_conv = std::make_unique<Instruction>(
      Opcode::kConvolution, Shape(conv->shape().element_type(), conv_dims));
  canonical_conv->mutable_attrs() = conv->attrs();
  canonical_conv->mutable_attrs().convolution_dimension_numbers = canonical;
  canonical_conv->AppendOperand(input);
  canonical_conv->AppendOperand(kernel);
  Computation* computation = conv->parent();
  Instruction* added = AddWithLayoutOf(computation, std::move(canonical_conv), input);

  // Back to the original output order.
  HLOGYM_ASSIGN(result, MakeTranspose(added, InversePermutation(output_order)));
  if (conv->shape().has_layout()) result->mutable_shape() = conv->shape();
  return computation->ReplaceInstruction(conv, result);
}

}  // namespace

absl::StatusOr<bool> ConvolutionCanonicalization::Run(Module& module) {
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, std::string(name()));
  if (!run.MustVisitModule()) return false;
  Computation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  bool changed = false;
  for (Instruction* instruction : entry->MakeInstructionPostOrder()) {
    if (instruction->opcode() != Opcode::kConvolution) continue;
    if (!WellFormed(*instruction)) {
      return absl::InvalidArgumentError(
          absl::StrCat(instruction->name(), ": malformed convolution dimension numbers"));
    }
    if (EigenCanRun(*instruction)) continue;
    HLOGYM_RETURN_IF_ERROR(Canonicalize(instruction));
    changed = true;
  }
  run.Complete();
  return changed;
}

bool ConvolutionCanonicalization::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConvolution});
}

}  // namespace hlogym
