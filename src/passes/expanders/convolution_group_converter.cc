#include "passes/expanders/convolution_group_converter.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// A convolution like `conv` (attributes kept) with new operands, dimension
// numbers, window and group counts; its shape is inferred.
absl::StatusOr<Instruction*> NewConvolution(const Instruction* conv, Instruction* lhs,
                                            Instruction* rhs,
                                            const ConvolutionDimensionNumbers& dnums,
                                            const Window& window, int64_t feature_groups,
                                            int64_t batch_groups) {
  HLOGYM_ASSIGN(shape,
                InferConvolutionShape(lhs->shape(), rhs->shape(), dnums, window, feature_groups,
                                      batch_groups, conv->shape().element_type()));
  auto clone = conv->CloneWithNewOperands({lhs, rhs}, "");
  clone->set_shape(shape);
  clone->mutable_attrs().convolution_dimension_numbers = dnums;
  clone->mutable_attrs().window = window;
  clone->mutable_attrs().feature_group_count = feature_groups;
  clone->mutable_attrs().batch_group_count = batch_groups;
  return AddWithLayoutOf(conv->parent(), std::move(clone), conv);
}

// `dims` with dimension `d` divided by `groups` and a dimension of size
// `groups` inserted before it.
std::vector<int64_t> SplitDimension(std::vector<int64_t> dims, int64_t d, int64_t groups) {
  dims[d] /= groups;
  dims.insert(dims.begin() + d, groups);
  return dims;
}

void ShiftAbove(std::vector<int64_t>& dims, int64_t d) {
  for (int64_t& x : dims) {
    if (x > d) ++x;
  }
}
void ShiftAbove(int64_t& x, int64_t d) {
  if (x > d) ++x;
}

// Splits the input's batch (`split_batch`) or feature dimension and the
// kernel's output features into [G, n/G], turning the group dimensions into a
// new spatial dimension that pairs group i of the input with group i of the
// kernel.
absl::StatusOr<Instruction*> SplitIntoSpatial(Instruction* conv, int64_t groups, bool split_batch) {
  ConvolutionDimensionNumbers dn = *conv->attrs().convolution_dimension_numbers;
  Instruction* input = conv->operand(0);
  Instruction* kernel = conv->operand(1);
  const int64_t in_dim = split_batch ? dn.input_batch_dimension : dn.input_feature_dimension;
  HLOGYM_ASSIGN(new_input,
                MakeReshape(input, SplitDimension(input->shape().dimensions(), in_dim, groups)));
  ShiftAbove(dn.input_spatial_dimensions, in_dim);
  dn.input_spatial_dimensions.push_back(in_dim);
  if (split_batch) {
    dn.input_batch_dimension = in_dim + 1;
    ShiftAbove(dn.input_feature_dimension, in_dim);
  } else {
    dn.input_feature_dimension = in_dim + 1;
    ShiftAbove(dn.input_batch_dimension, in_dim);
  }
  const int64_t kof = dn.kernel_output_feature_dimension;
  if (kernel->shape().dimensions(kof) % groups != 0 ||
      input->shape().dimensions(in_dim) % groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(conv->name(), ": dimensions are not divisible by the group count"));
  }
  HLOGYM_ASSIGN(new_kernel,
                MakeReshape(kernel, SplitDimension(kernel->shape().dimensions(), kof, groups)));
  ShiftAbove(dn.kernel_spatial_dimensions, kof);
  dn.kernel_spatial_dimensions.push_back(kof);
  dn.kernel_output_feature_dimension = kof + 1;
  ShiftAbove(dn.kernel_input_feature_dimension, kof);
  const int64_t of = dn.output_feature_dimension;
  ShiftAbove(dn.output_spatial_dimensions, of);
  dn.output_spatial_dimensions.push_back(of);
  dn.output_feature_dimension = of + 1;
  ShiftAbove(dn.output_batch_dimension, of);
  Window window = *conv->attrs().window;
  WindowDimension wd;
  wd.size = groups;
  wd.stride = groups - 1;
  wd.base_dilation = groups;
  window.dimensions.push_back(wd);
  HLOGYM_ASSIGN(new_conv, NewConvolution(conv, new_input, new_kernel, dn, window,
                                         split_batch ? conv->attrs().feature_group_count : 1, 1));
  return MakeReshape(new_conv, conv->shape().dimensions());
}

// pred mask over `dims`: true where the group of dimension `a` (blocks of
// dims[a] / groups) equals the group of dimension `b`.
absl::StatusOr<Instruction*> GroupMask(Computation* computation, const std::vector<int64_t>& dims,
                                       int64_t a, int64_t b, int64_t groups, bool with_layout) {
  std::vector<Instruction*> ids;
  for (int64_t d : {a, b}) {
    const int64_t n = dims[d], block = n / groups;
    if (block == 0 || n % groups != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension of size ", n, " does not split into ", groups, " groups"));
    }
    Literal literal(Shape(PrimitiveType::kS32, {n}));
    for (int64_t i = 0; i < n; ++i) literal.SetFromInt64(i, i / block);
    Instruction* constant = MakeConstant(computation, std::move(literal), with_layout);
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(constant, dims, std::vector<int64_t>{d}));
    ids.push_back(broadcast);
  }
  return MakeCompare(ComparisonDirection::kEq, ids[0], ids[1]);
}

// select(mask, x, 0).
absl::StatusOr<Instruction*> Masked(Instruction* mask, Instruction* x) {
  Instruction* zero =
      MakeScalarConstant(x->parent(), x->shape().element_type(), 0, x->shape().has_layout());
  HLOGYM_ASSIGN(zeros, MakeBroadcast(zero, x->shape().dimensions(), {}));
  return MakeSelect(mask, x, zeros);
}

Computation* AddComputation(Module& module, PrimitiveType type, bool with_layout) {
  auto add = std::make_unique<Computation>(module.UniqueName("add_computation"));
  add->set_parent(&module);
  Shape scalar = Shape::Scalar(type);
  if (with_layout) scalar.SetDefaultLayout();
  std::vector<Instruction*> params;
  for (int64_t i = 0; i < 2; ++i) {
    auto p = std::make_unique<Instruction>(Opcode::kParameter, scalar, i == 0 ? "lhs" : "rhs");
    p->set_name(module.UniqueName(i == 0 ? "lhs" : "rhs"));
    p->mutable_attrs().parameter_number = i;
    params.push_back(add->AddInstruction(std::move(p)));
  }
  auto sum = std::make_unique<Instruction>(Opcode::kAdd, scalar);
  sum->AppendOperand(params[0]);
  sum->AppendOperand(params[1]);
  add->set_root_instruction(add->AddInstruction(std::move(sum)));
  return module.AddComputation(std::move(add));
}

// Batch groups where input batch == kernel output features == G.
absl::StatusOr<Instruction*> ExpandBatchGroupsMasked(Instruction* conv, int64_t groups) {
  Computation* computation = conv->parent();
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  const bool with_layout = conv->shape().has_layout();
  HLOGYM_ASSIGN(full, NewConvolution(conv, conv->operand(0), conv->operand(1), dn,
                                     *conv->attrs().window, 1, 1));
  HLOGYM_ASSIGN(mask, GroupMask(computation, full->shape().dimensions(), dn.output_batch_dimension,
                                dn.output_feature_dimension, groups, with_layout));
  HLOGYM_ASSIGN(masked, Masked(mask, full));
  PrimitiveType sum_type = masked->shape().element_type();
  if (BitWidth(sum_type) < 32) {
    sum_type = PrimitiveType::kF32;
    HLOGYM_ASSIGN(wide, MakeConvert(masked, sum_type));
    masked = wide;
  }
  Instruction* zero = MakeScalarConstant(computation, sum_type, 0, with_layout);
  Window window;
  window.dimensions.resize(full->shape().rank());
  window.dimensions[dn.output_batch_dimension].size = groups;
  window.dimensions[dn.output_batch_dimension].stride = groups;
  Computation* add = AddComputation(*computation->parent(), sum_type, with_layout);
  std::vector<Shape> inputs = {masked->shape()}, inits = {zero->shape()};
  HLOGYM_ASSIGN(shape, InferReduceWindowShape(inputs, inits, window, add));
  auto rw = std::make_unique<Instruction>(Opcode::kReduceWindow, shape);
  rw->AppendOperand(masked);
  rw->AppendOperand(zero);
  rw->mutable_attrs().window = window;
  rw->mutable_called_computations().push_back(add);
  Instruction* summed = AddWithLayoutOf(computation, std::move(rw), masked);
  // XLA converts back even when the type did not change.
  return MakeConvert(summed, conv->shape().element_type());
}

// Depthwise feature groups: expand the filter to all input features.
absl::StatusOr<Instruction*> ExpandDepthwiseFilter(Instruction* conv, int64_t groups) {
  Computation* computation = conv->parent();
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  Instruction* kernel = conv->operand(1);
  const int64_t kif = dn.kernel_input_feature_dimension;
  std::vector<int64_t> reduced_dims, kept;
  for (int64_t i = 0; i < kernel->shape().rank(); ++i) {
    if (i == kif) continue;
    reduced_dims.push_back(kernel->shape().dimensions(i));
    kept.push_back(i);
  }
  std::vector<int64_t> expanded_dims = kernel->shape().dimensions();
  expanded_dims[kif] *= groups;
  HLOGYM_ASSIGN(reshaped, MakeReshape(kernel, reduced_dims));
  HLOGYM_ASSIGN(broadcast, MakeBroadcast(reshaped, expanded_dims, kept));
  HLOGYM_ASSIGN(mask, GroupMask(computation, expanded_dims, kif, dn.kernel_output_feature_dimension,
                                groups, conv->shape().has_layout()));
  HLOGYM_ASSIGN(filter, Masked(mask, broadcast));
  HLOGYM_ASSIGN(result,
                NewConvolution(conv, conv->operand(0), filter, dn, *conv->attrs().window, 1, 1));
  return result;
}

bool WellFormed(const Instruction* conv) {
  return conv->operand_count() == 2 && conv->attrs().convolution_dimension_numbers.has_value() &&
         conv->attrs().window.has_value() && conv->operand(0)->shape().IsArray() &&
         conv->operand(1)->shape().IsArray() && conv->shape().IsArray();
}

}  // namespace

absl::StatusOr<bool> ConvolutionGroupConverter::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Instruction*> matched;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != Opcode::kConvolution || !WellFormed(instruction)) continue;
      const auto& attrs = instruction->attrs();
      if (batch_groups_only_) {
        if (attrs.batch_group_count > 1) matched.push_back(instruction);
      } else {
        PrimitiveType type = instruction->shape().element_type();
        if (attrs.feature_group_count > 1 && attrs.batch_group_count == 1 &&
            type != PrimitiveType::kF16 && type != PrimitiveType::kF32) {
          matched.push_back(instruction);
        }
      }
    }
  }
  bool changed = false;
  for (Instruction* conv : matched) {
    const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
    absl::StatusOr<Instruction*> replacement = nullptr;
    if (batch_groups_only_) {
      const int64_t groups = conv->attrs().batch_group_count;
      const bool one_per_group =
          conv->operand(0)->shape().dimensions(dn.input_batch_dimension) == groups &&
          conv->operand(1)->shape().dimensions(dn.kernel_output_feature_dimension) == groups;
      if (!one_per_group) {
        replacement = SplitIntoSpatial(conv, groups, /*split_batch=*/true);
      } else if (conv->attrs().feature_group_count == 1) {
        replacement = ExpandBatchGroupsMasked(conv, groups);
      }
    } else {
      const int64_t groups = conv->attrs().feature_group_count;
      if (conv->operand(1)->shape().dimensions(dn.kernel_input_feature_dimension) == 1) {
        replacement = ExpandDepthwiseFilter(conv, groups);
      } else {
        replacement = SplitIntoSpatial(conv, groups, /*split_batch=*/false);
      }
    }
    if (!replacement.ok()) return replacement.status();
    if (*replacement == nullptr) continue;
    (*replacement)->set_shape(conv->shape());
    HLOGYM_RETURN_IF_ERROR(conv->parent()->ReplaceInstruction(conv, *replacement));
    changed = true;
  }
  if (changed) module.SortComputationsCalleesFirst();
  run.Complete();
  return changed;
}

bool ConvolutionGroupConverter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConvolution});
}

}  // namespace hlogym
