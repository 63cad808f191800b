#include "passes/expanders/convolution_4d_expander.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr int64_t kSpatialRank = 4;

// Whether spatial dimension `i` of `convolution` can be dropped. The caller
// has checked that the attributes and shapes are consistent.
bool IsTrivialSpatialDimension(const Instruction* convolution, int64_t i) {
  const ConvolutionDimensionNumbers& dnums = *convolution->attrs().convolution_dimension_numbers;
  const WindowDimension& window = convolution->attrs().window->dimensions[i];
  return convolution->operand(0)->shape().dimensions(dnums.input_spatial_dimensions[i]) == 1 &&
         convolution->operand(1)->shape().dimensions(dnums.kernel_spatial_dimensions[i]) == 1 &&
         window.size == 1 && window.padding_low == 0 && window.padding_high == 0;
}

// The shapes and attributes the rewrite reads are present and agree.
bool WellFormed(const Instruction* convolution) {
  const InstructionAttributes& attrs = convolution->attrs();
  if (convolution->operand_count() != 2 || !attrs.convolution_dimension_numbers.has_value() ||
      !attrs.window.has_value()) {
    return false;
  }
  const ConvolutionDimensionNumbers& dnums = *attrs.convolution_dimension_numbers;
  const Shape& input = convolution->operand(0)->shape();
  const Shape& kernel = convolution->operand(1)->shape();
  const Shape& output = convolution->shape();
  if (!input.IsArray() || !kernel.IsArray() || !output.IsArray() || !input.is_static() ||
      !kernel.is_static() || !output.is_static()) {
    return false;
  }
  const int64_t spatial = static_cast<int64_t>(dnums.input_spatial_dimensions.size());
  if (static_cast<int64_t>(dnums.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(dnums.output_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(attrs.window->dimensions.size()) != spatial) {
    return false;
  }
  for (int64_t i = 0; i < spatial; ++i) {
    if (dnums.input_spatial_dimensions[i] < 0 ||
        dnums.input_spatial_dimensions[i] >= input.rank() ||
        dnums.kernel_spatial_dimensions[i] < 0 ||
        dnums.kernel_spatial_dimensions[i] >= kernel.rank() ||
        dnums.output_spatial_dimensions[i] < 0 ||
        dnums.output_spatial_dimensions[i] >= output.rank()) {
      return false;
    }
  }
  return true;
}

bool Matches(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kConvolution) return false;
  const auto& dnums = instruction->attrs().convolution_dimension_numbers;
  if (!dnums.has_value() ||
      static_cast<int64_t>(dnums->input_spatial_dimensions.size()) != kSpatialRank) {
    return false;
  }
  // A malformed convolution matches so that the expansion reports it.
  if (!WellFormed(instruction)) return true;
  for (int64_t i = 0; i < kSpatialRank; ++i) {
    if (IsTrivialSpatialDimension(instruction, i)) return true;
  }
  return false;
}

// `dimension` renumbered after the (sorted) `removed` dimensions are gone.
int64_t Renumber(const std::vector<int64_t>& removed, int64_t dimension) {
  return dimension -
         (std::lower_bound(removed.begin(), removed.end(), dimension) - removed.begin());
}

std::vector<int64_t> DropDimensions(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& removed) {
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (!std::binary_search(removed.begin(), removed.end(), d)) kept.push_back(dims[d]);
  }
  return kept;
}

absl::StatusOr<Instruction*> DropTrivialSpatialDimensions(Instruction* convolution) {
  if (!WellFormed(convolution)) {
    return absl::InvalidArgumentError(
        absl::StrCat(convolution->name(),
                     ": malformed convolution (operands, window or dimension numbers do not "
                     "match its shapes)"));
  }
  const ConvolutionDimensionNumbers& dnums = *convolution->attrs().convolution_dimension_numbers;
  const Window& window = *convolution->attrs().window;
  ConvolutionDimensionNumbers new_dnums = dnums;
  new_dnums.input_spatial_dimensions.clear();
  new_dnums.kernel_spatial_dimensions.clear();
  new_dnums.output_spatial_dimensions.clear();
  Window new_window;
  std::vector<int64_t> removed_input, removed_kernel, removed_output;
  for (int64_t i = 0; i < kSpatialRank; ++i) {
    if (IsTrivialSpatialDimension(convolution, i)) {
      removed_input.push_back(dnums.input_spatial_dimensions[i]);
      removed_kernel.push_back(dnums.kernel_spatial_dimensions[i]);
      removed_output.push_back(dnums.output_spatial_dimensions[i]);
    } else {
      new_window.dimensions.push_back(window.dimensions[i]);
      new_dnums.input_spatial_dimensions.push_back(dnums.input_spatial_dimensions[i]);
      new_dnums.kernel_spatial_dimensions.push_back(dnums.kernel_spatial_dimensions[i]);
      new_dnums.output_spatial_dimensions.push_back(dnums.output_spatial_dimensions[i]);
    }
  }
  std::sort(removed_input.begin(), removed_input.end());
  std::sort(removed_kernel.begin(), removed_kernel.end());
  std::sort(removed_output.begin(), removed_output.end());
  new_dnums.input_batch_dimension = Renumber(removed_input, dnums.input_batch_dimension);
  new_dnums.input_feature_dimension = Renumber(removed_input, dnums.input_feature_dimension);
  for (int64_t& d : new_dnums.input_spatial_dimensions) d = Renumber(removed_input, d);
  new_dnums.kernel_input_feature_dimension =
      Renumber(removed_kernel, dnums.kernel_input_feature_dimension);
  new_dnums.kernel_output_feature_dimension =
      Renumber(removed_kernel, dnums.kernel_output_feature_dimension);
  for (int64_t& d : new_dnums.kernel_spatial_dimensions) d = Renumber(removed_kernel, d);
  new_dnums.output_batch_dimension = Renumber(removed_output, dnums.output_batch_dimension);
  new_dnums.output_feature_dimension = Renumber(removed_output, dnums.output_feature_dimension);
  for (int64_t& d : new_dnums.output_spatial_dimensions) d = Renumber(removed_output, d);

  Instruction* input = convolution->operand(0);
  Instruction* kernel = convolution->operand(1);
  HLOGYM_ASSIGN(new_input,
                MakeReshape(input, DropDimensions(input->shape().dimensions(), removed_input)));
  HLOGYM_ASSIGN(new_kernel,
                MakeReshape(kernel, DropDimensions(kernel->shape().dimensions(), removed_kernel)));
  const InstructionAttributes& attrs = convolution->attrs();
  auto inferred = InferConvolutionShape(
      new_input->shape(), new_kernel->shape(), new_dnums, new_window, attrs.feature_group_count,
      attrs.batch_group_count, convolution->shape().element_type());
  if (!inferred.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        convolution->name(), ": lower-rank convolution is invalid: ", inferred.status().message()));
  }
  Shape new_shape = *inferred;
  if (new_shape.dimensions() != DropDimensions(convolution->shape().dimensions(), removed_output)) {
    return absl::InvalidArgumentError(absl::StrCat(convolution->name(), ": result shape ",
                                                   convolution->shape().ToString(),
                                                   " does not match its operands"));
  }
  Computation* computation = convolution->parent();
  auto clone = convolution->CloneWithNewOperands(
      {new_input, new_kernel}, computation->parent()->UniqueName(convolution->name()));
  clone->mutable_attrs().convolution_dimension_numbers = new_dnums;
  clone->mutable_attrs().window = new_window;
  clone->set_shape(new_shape);
  Instruction* lower = AddWithLayoutOf(computation, std::move(clone), input);
  HLOGYM_ASSIGN(restored, MakeReshape(lower, convolution->shape().dimensions()));
  restored->set_shape(convolution->shape());  // keeps the original layout
  return restored;
}

}  // namespace

absl::StatusOr<bool> Convolution4DExpander::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, DropTrivialSpatialDimensions);
}

bool Convolution4DExpander::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kConvolution,
                             [](const Instruction& conv) { return Matches(&conv); });
}

}  // namespace hlogym
