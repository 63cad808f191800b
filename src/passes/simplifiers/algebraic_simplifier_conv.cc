// Convolution rewrites of the algebraic simplifier, in XLA's order (each
// returns as soon as one fires):
//  1. a convolution with an empty input or kernel -> zeros;
//  2. conv(pad(x, 0), k) -> the padding folded into the window;
//  3. conv(x, pad(k, 0)) with only interior kernel padding -> window dilation;
//  4. operand swap: when the kernel's spatial extent is larger than the
//     input's (typical of the last, small-resolution layers and of backprop
//     filter convolutions), the kernel becomes the input: the window is
//     rewritten over the input's spatial sizes, the old kernel is reversed
//     and batch/feature roles trade places;
//  5. a depthwise convolution (multiplier 1) whose every spatial dimension is
//     1 in the kernel or in the output -> multiply (+ reduce).
// Left out: conv -> dot, which XLA only runs layout-sensitive (after layout
// assignment); the oneDNN bf16 promotion (off without oneDNN); scalar
// multiply reduction (off by default); XLA:GPU's cuDNN-lowerability check on
// swapped convolutions (algsimp-gpu swaps by the same profitability rule).
#include <algorithm>
#include <vector>

#include "analysis/shape_inference.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/simplifiers/algebraic_simplifier_internal.h"

namespace hlogym::algsimp {
namespace {

bool IsZeroScalarConstant(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kConstant && hlo->shape().rank() == 0 && IsAll(hlo, 0);
}

bool HasSparsity(const Instruction* conv) { return conv->attrs().FindRaw("sparsity") != nullptr; }

}  // namespace

// A convolution like `conv` (every other attribute kept) over `lhs` and `rhs`
// with `window` and `dnums`; its shape is inferred and must equal `conv`'s.
absl::StatusOr<Instruction*> Visitor::AddConvolutionLike(Instruction* conv, Instruction* lhs,
                                                         Instruction* rhs, const Window& window,
                                                         const ConvolutionDimensionNumbers& dnums) {
  HLOGYM_ASSIGN(
      shape, InferConvolutionShape(lhs->shape(), rhs->shape(), dnums, window,
                                   conv->attrs().feature_group_count,
                                   conv->attrs().batch_group_count, conv->shape().element_type()));
  auto clone = conv->CloneWithNewOperands({lhs, rhs}, "");
  clone->set_shape(shape);
  clone->mutable_attrs().window = window;
  clone->mutable_attrs().convolution_dimension_numbers = dnums;
  return computation_->AddInstruction(std::move(clone));
}

absl::StatusOr<bool> Visitor::FoldConvInputPad(Instruction* conv) {
  Instruction* pad = conv->operand(0);
  if (pad->opcode() != Opcode::kPad || !IsZeroScalarConstant(pad->operand(1))) {
    return false;
  }
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  const std::vector<PaddingDimension>& padding = pad->attrs().padding;
  for (int64_t d : {dn.input_batch_dimension, dn.input_feature_dimension}) {
    const PaddingDimension& p = padding[d];
    if (p.low != 0 || p.high != 0 || p.interior != 0) {
      return false;
    }
  }
  Window window = *conv->attrs().window;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const PaddingDimension& p = padding[dn.input_spatial_dimensions[i]];
    WindowDimension& w = window.dimensions[i];
    // Interior padding becomes base dilation, which cannot combine with a
    // window that is already padded or dilated.
    if (p.interior != 0 && (w.padding_low != 0 || w.padding_high != 0 || w.base_dilation != 1)) {
      return false;
    }
    // Edge padding of a base-dilated input would land between the dilated
    // elements' edges differently.
    if (w.base_dilation != 1 && (p.low != 0 || p.high != 0 || p.interior != 0)) {
      return false;
    }
    w.padding_low += p.low;
    w.padding_high += p.high;
    if (p.interior != 0) w.base_dilation = 1 + p.interior;
  }
  HLOGYM_ASSIGN(made, AddConvolutionLike(conv, pad->operand(0), conv->operand(1), window, dn));
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(conv, made));
  return true;
}

absl::StatusOr<bool> Visitor::FoldConvFilterPad(Instruction* conv) {
  Instruction* pad = conv->operand(1);
  if (pad->opcode() != Opcode::kPad || !IsAll(pad->operand(1), 0)) {
    return false;
  }
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  const std::vector<PaddingDimension>& padding = pad->attrs().padding;
  for (int64_t d : {dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension}) {
    const PaddingDimension& p = padding[d];
    if (p.low != 0 || p.high != 0 || p.interior != 0) {
      return false;
    }
  }
  Window window = *conv->attrs().window;
  for (size_t i = 0; i < dn.kernel_spatial_dimensions.size(); ++i) {
    const int64_t d = dn.kernel_spatial_dimensions[i];
    const PaddingDimension& p = padding[d];
    if (p.low != 0 || p.high != 0) return false;
    if (p.interior == 0) continue;
    WindowDimension& w = window.dimensions[i];
    if (w.window_dilation > 1) return false;
    w.window_dilation = 1 + p.interior;
    w.size = pad->operand(0)->shape().dimensions(d);
  }
  HLOGYM_ASSIGN(made, AddConvolutionLike(conv, conv->operand(0), pad->operand(0), window, dn));
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(conv, made));
  return true;
}

absl::StatusOr<bool> Visitor::SwapConvOperands(Instruction* conv) {
  const InstructionAttributes& attrs = conv->attrs();
  if (attrs.feature_group_count > 1 || attrs.batch_group_count > 1 || HasSparsity(conv)) {
    return false;
  }
  const ConvolutionDimensionNumbers& dn = *attrs.convolution_dimension_numbers;
  Instruction* input = conv->operand(0);
  Instruction* kernel = conv->operand(1);
  Window swapped;
  std::vector<int64_t> reverse_dims;
  int64_t kernel_product = 1;
  int64_t swapped_kernel_product = 1;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& w = attrs.window->dimensions[i];
    const int64_t k = w.size;
    const int64_t n = input->shape().dimensions(dn.input_spatial_dimensions[i]);
    const bool plain =
        !w.window_reversal && w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1;
    // Dimensions that act as a grouping (the window tiles the dilated base
    // exactly) or a full contraction stay as they are and cost nothing.
    const bool grouping = plain && w.base_dilation == k && w.stride == k - 1;
    const bool contraction = plain && k == n && w.base_dilation == 1 && w.stride == 1;
    if (grouping || contraction) {
      swapped.dimensions.push_back(w);
      continue;
    }
    kernel_product *= k;
    // A size-1 input fully padded on both sides is a kernel-sized window.
    const bool padded_point = n == 1 && w.stride == 1 && w.window_dilation == 1 &&
                              w.padding_low == k - 1 && w.padding_high == k - 1;
    swapped_kernel_product *= padded_point ? k : n;
    const int64_t dilated_k = 1 + (k - 1) * w.window_dilation;
    const int64_t dilated_n = 1 + (n - 1) * w.base_dilation;
    WindowDimension s;
    s.size = n;
    s.window_reversal = true;
    s.base_dilation = w.window_dilation;
    s.window_dilation = w.base_dilation;
    s.stride = w.stride;
    s.padding_low = dilated_n + w.padding_low - dilated_k;
    s.padding_high = dilated_n + w.padding_high - dilated_k;
    swapped.dimensions.push_back(s);
    if (!w.window_reversal) reverse_dims.push_back(dn.kernel_spatial_dimensions[i]);
  }
  if (kernel_product <= swapped_kernel_product) return false;

  ConvolutionDimensionNumbers sdn;
  sdn.output_spatial_dimensions = dn.output_spatial_dimensions;
  sdn.output_batch_dimension = dn.output_feature_dimension;
  sdn.output_feature_dimension = dn.output_batch_dimension;
  sdn.input_spatial_dimensions = dn.kernel_spatial_dimensions;
  sdn.input_batch_dimension = dn.kernel_output_feature_dimension;
  sdn.input_feature_dimension = dn.kernel_input_feature_dimension;
  sdn.kernel_spatial_dimensions = dn.input_spatial_dimensions;
  sdn.kernel_output_feature_dimension = dn.input_batch_dimension;
  sdn.kernel_input_feature_dimension = dn.input_feature_dimension;

  // Check the swapped convolution's shape before adding anything, so that a
  // rejected swap leaves no dead reverse behind.
  absl::StatusOr<Shape> shape = InferConvolutionShape(kernel->shape(), input->shape(), sdn, swapped,
                                                      1, 1, conv->shape().element_type());
  if (!shape.ok() || !shape->Compatible(conv->shape())) return false;
  if (!reverse_dims.empty()) {
    Instruction* ops[] = {kernel};
    kernel = Add(Opcode::kReverse, kernel->shape(), ops);
    kernel->mutable_attrs().dimensions = reverse_dims;
  }
  HLOGYM_ASSIGN(made, AddConvolutionLike(conv, kernel, input, swapped, sdn));
  std::vector<Precision>& precision = (made)->mutable_attrs().operand_precision;
  if (precision.size() == 2) std::swap(precision[0], precision[1]);
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(conv, made));
  return true;
}

absl::StatusOr<bool> Visitor::SimplifyConvToMultiply(Instruction* conv) {
  const InstructionAttributes& attrs = conv->attrs();
  if (HasSparsity(conv)) return false;
  const ConvolutionDimensionNumbers& dn = *attrs.convolution_dimension_numbers;
  Instruction* input = conv->operand(0);
  Instruction* kernel = conv->operand(1);
  const Shape& out = conv->shape();
  std::vector<int64_t> reduce_dims;
  for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& w = attrs.window->dimensions[i];
    if (w.stride != 1 || w.padding_low != 0 || w.padding_high != 0 || w.base_dilation != 1 ||
        w.window_dilation != 1) {
      return false;
    }
    const int64_t k = kernel->shape().dimensions(dn.kernel_spatial_dimensions[i]);
    if (k != 1 && out.dimensions(dn.output_spatial_dimensions[i]) != 1) return false;
    if (k != 1) reduce_dims.push_back(dn.output_spatial_dimensions[i]);
  }
  // Depthwise with one output channel per input channel.
  const int64_t groups = attrs.feature_group_count;
  if (kernel->shape().dimensions(dn.kernel_input_feature_dimension) != 1 ||
      input->shape().dimensions(dn.input_feature_dimension) != groups ||
      out.dimensions(dn.output_feature_dimension) != groups) {
    return false;
  }
  // Bring both operands into the output's dimension order.
  const int64_t rank = out.rank();
  std::vector<int64_t> input_perm(rank), kernel_perm(rank);
  input_perm[dn.output_batch_dimension] = dn.input_batch_dimension;
  input_perm[dn.output_feature_dimension] = dn.input_feature_dimension;
  kernel_perm[dn.output_batch_dimension] = dn.kernel_input_feature_dimension;
  kernel_perm[dn.output_feature_dimension] = dn.kernel_output_feature_dimension;
  for (size_t i = 0; i < dn.output_spatial_dimensions.size(); ++i) {
    input_perm[dn.output_spatial_dimensions[i]] = dn.input_spatial_dimensions[i];
    kernel_perm[dn.output_spatial_dimensions[i]] = dn.kernel_spatial_dimensions[i];
  }
  const PrimitiveType type = out.element_type();
  if (!IsIdentityPermutation(input_perm)) input = AddTranspose(input, input_perm);
  if (!IsIdentityPermutation(kernel_perm)) kernel = AddTranspose(kernel, kernel_perm);
  if (input->shape().element_type() != type) input = AddConvert(input, type);
  if (kernel->shape().element_type() != type) kernel = AddConvert(kernel, type);
  // Broadcast the kernel over the input's shape; its size-1 dimensions go
  // first (a reshape), the rest map onto the same dimensions.
  std::vector<int64_t> kept_dims, kept_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (kernel->shape().dimensions(d) != 1) {
      kept_dims.push_back(d);
      kept_sizes.push_back(kernel->shape().dimensions(d));
    }
  }
  if (static_cast<int64_t>(kept_dims.size()) != rank) {
    kernel = AddReshape(kernel, MakeShapeLike(type, kept_sizes, kernel->shape()));
  }
  const Shape& product_shape = input->shape();
  Instruction* broadcast = AddBroadcast(kernel, product_shape, kept_dims);
  Instruction* product = AddBinary(Opcode::kMultiply, product_shape, input, broadcast);
  if (reduce_dims.empty()) {
    HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(conv, product));
    return true;
  }

  // Sum over the dimensions where the kernel covered the whole input.
  Computation* add = AddScalarBinaryComputation(*computation_->parent(), "add", Opcode::kAdd, type,
                                                product_shape.has_layout());
  HLOGYM_ASSIGN(sum,
                MakeReduce(product, AddScalarConstant(type, 0, product_shape), reduce_dims, add));
  HLOGYM_RETURN_IF_ERROR(ReplaceWithNew(conv, AddReshape(sum, out)));
  return true;
}

absl::Status Visitor::HandleConvolution(Instruction* conv) {
  if (!conv->attrs().window.has_value() ||
      !conv->attrs().convolution_dimension_numbers.has_value() || conv->operand_count() != 2 ||
      !conv->shape().IsArray()) {
    return absl::OkStatus();
  }
  if (IsZeroElementArray(conv->operand(0)->shape()) ||
      IsZeroElementArray(conv->operand(1)->shape())) {
    return ReplaceWithNew(conv, ScalarLike(conv->shape(), 0));
  }
  for (auto rewrite : {&Visitor::FoldConvInputPad, &Visitor::FoldConvFilterPad}) {
    absl::StatusOr<bool> done = (this->*rewrite)(conv);
    if (!done.ok() || *done) return done.status();
  }
  if (options_.enable_conv_operand_swap) {
    absl::StatusOr<bool> done = SwapConvOperands(conv);
    if (!done.ok() || *done) return done.status();
  }
  return SimplifyConvToMultiply(conv).status();
}

}  // namespace hlogym::algsimp
