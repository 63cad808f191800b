#include "passes/expanders/batchnorm_expander.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// The pieces every expansion shares.
class Expansion {
 public:
  explicit Expansion(Instruction* batch_norm)
      : bn_(batch_norm),
        computation_(batch_norm->parent()),
        x_(batch_norm->operand(0)),
        type_(x_->shape().element_type()),
        feature_(batch_norm->attrs().feature_index),
        layout_(x_->shape().has_layout()) {
    for (int64_t i = 0; i < x_->shape().rank(); ++i) {
      if (i != feature_) reduce_dims_.push_back(i);
    }
  }

  absl::Status Validate() const {
    const int64_t expected = bn_->opcode() == Opcode::kBatchNormTraining ? 3 : 5;
    if (bn_->operand_count() != expected || !x_->shape().IsArray() || !IsFloatingPointType(type_) ||
        feature_ < 0 || feature_ >= x_->shape().rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat(bn_->name(), ": malformed batch-norm (operands, type or feature_index)"));
    }
    for (Instruction* operand : bn_->operands()) {
      if (!operand->shape().IsArray() || operand->shape().element_type() != type_) {
        return absl::InvalidArgumentError(
            absl::StrCat(bn_->name(), ": batch-norm operands must share one float type"));
      }
    }
    return absl::OkStatus();
  }

  Instruction* Scalar(double value) {
    return MakeScalarConstant(computation_, type_, value, layout_);
  }
  absl::StatusOr<Instruction*> Splat(Instruction* scalar, const Shape& like) {
    return MakeBroadcast(scalar, like.dimensions(), {});
  }
  // A feature vector broadcast to x's shape.
  absl::StatusOr<Instruction*> Features(Instruction* vector) {
    const int64_t dims[] = {feature_};
    return MakeBroadcast(vector, x_->shape().dimensions(), dims);
  }
  absl::StatusOr<Instruction*> Sum(Instruction* value, Instruction* zero) {
    if (add_ == nullptr) add_ = AddComputation();
    return MakeReduce(value, zero, reduce_dims_, add_);
  }
  // N, the elements per feature, as a scalar of x's type.
  absl::StatusOr<Instruction*> ElementsPerFeature() {
    Instruction* count =
        MakeConstant(computation_, Literal::Scalar(PrimitiveType::kS32, int64_t{1}), layout_);
    for (int64_t d : reduce_dims_) {
      auto size = std::make_unique<Instruction>(Opcode::kGetDimensionSize,
                                                Shape::Scalar(PrimitiveType::kS32));
      size->mutable_attrs().dimensions = {d};
      size->AppendOperand(x_);
      Instruction* added = AddWithLayoutOf(computation_, std::move(size), x_);
      HLOGYM_ASSIGN(product, MakeBinary(Opcode::kMultiply, added, count));
      count = product;
    }
    return MakeConvert(count, type_);
  }
  // value / N, N broadcast to value's shape.
  absl::StatusOr<Instruction*> Mean(Instruction* n, Instruction* value) {
    HLOGYM_ASSIGN(splat, Splat(n, value->shape()));
    return MakeBinary(Opcode::kDivide, value, splat);
  }

  Instruction* bn() const { return bn_; }
  Instruction* x() const { return x_; }
  bool added_computation() const { return add_ != nullptr; }

 private:
  Computation* AddComputation() {
    Module& module = *computation_->parent();
    auto add = std::make_unique<Computation>(module.UniqueName("scalar_add_computation"));
    add->set_parent(&module);
    Shape scalar = Shape::Scalar(type_);
    if (layout_) scalar.SetDefaultLayout();
    Instruction* params[2];
    for (int64_t i = 0; i < 2; ++i) {
      auto p = std::make_unique<Instruction>(
          Opcode::kParameter, scalar, module.UniqueName(i == 0 ? "scalar_lhs" : "scalar_rhs"));
      p->mutable_attrs().parameter_number = i;
      params[i] = add->AddInstruction(std::move(p));
    }
    auto sum = std::make_unique<Instruction>(Opcode::kAdd, scalar);
    sum->AppendOperand(params[0]);
    sum->AppendOperand(params[1]);
    add->set_root_instruction(add->AddInstruction(std::move(sum)));
    return module.AddComputation(std::move(add));
  }

  Instruction* bn_;
  Computation* computation_;
  Instruction* x_;
  PrimitiveType type_;
  int64_t feature_;
  bool layout_;
  std::vector<int64_t> reduce_dims_;
  Computation* add_ = nullptr;
};

absl::StatusOr<Instruction*> ExpandTraining(Expansion& e) {
  Instruction* x = e.x();
  Instruction* scale = e.bn()->operand(1);
  Instruction* offset = e.bn()->operand(2);
  Instruction* zero = e.Scalar(0);
  HLOGYM_ASSIGN(epsilon, e.Splat(e.Scalar(e.bn()->attrs().epsilon), x->shape()));
  HLOGYM_ASSIGN(n, e.ElementsPerFeature());
  HLOGYM_ASSIGN(scale_b, e.Features(scale));
  HLOGYM_ASSIGN(offset_b, e.Features(offset));
  HLOGYM_ASSIGN(x_squared, MakeBinary(Opcode::kMultiply, x, x));
  HLOGYM_ASSIGN(sum, e.Sum(x, zero));
  HLOGYM_ASSIGN(squared_sum, e.Sum(x_squared, zero));
  HLOGYM_ASSIGN(mean, e.Mean(n, sum));
  HLOGYM_ASSIGN(mean_b, e.Features(mean));
  HLOGYM_ASSIGN(square_mean, e.Mean(n, squared_sum));
  HLOGYM_ASSIGN(mean_square, MakeBinary(Opcode::kMultiply, mean, mean));
  HLOGYM_ASSIGN(var, MakeBinary(Opcode::kSubtract, square_mean, mean_square));
  HLOGYM_ASSIGN(var_b, e.Features(var));
  HLOGYM_ASSIGN(var_eps, MakeBinary(Opcode::kAdd, var_b, epsilon));
  HLOGYM_ASSIGN(rsqrt, MakeUnary(Opcode::kRsqrt, var_eps));
  HLOGYM_ASSIGN(centered, MakeBinary(Opcode::kSubtract, x, mean_b));
  HLOGYM_ASSIGN(normalized, MakeBinary(Opcode::kMultiply, centered, rsqrt));
  HLOGYM_ASSIGN(scaled, MakeBinary(Opcode::kMultiply, normalized, scale_b));
  HLOGYM_ASSIGN(shifted, MakeBinary(Opcode::kAdd, scaled, offset_b));
  Instruction* elements[] = {shifted, mean, var};
  return MakeTuple(x->parent(), elements);
}

absl::StatusOr<Instruction*> ExpandInference(Expansion& e) {
  Instruction* x = e.x();
  Instruction* scale = e.bn()->operand(1);
  Instruction* offset = e.bn()->operand(2);
  Instruction* mean = e.bn()->operand(3);
  Instruction* var = e.bn()->operand(4);
  HLOGYM_ASSIGN(epsilon, e.Splat(e.Scalar(e.bn()->attrs().epsilon), scale->shape()));
  HLOGYM_ASSIGN(var_eps, MakeBinary(Opcode::kAdd, var, epsilon));
  HLOGYM_ASSIGN(rsqrt, MakeUnary(Opcode::kRsqrt, var_eps));
  HLOGYM_ASSIGN(true_scale, MakeBinary(Opcode::kMultiply, scale, rsqrt));
  HLOGYM_ASSIGN(mean_scaled, MakeBinary(Opcode::kMultiply, mean, true_scale));
  HLOGYM_ASSIGN(true_shift, MakeBinary(Opcode::kSubtract, offset, mean_scaled));
  HLOGYM_ASSIGN(scale_b, e.Features(true_scale));
  HLOGYM_ASSIGN(product, MakeBinary(Opcode::kMultiply, x, scale_b));
  HLOGYM_ASSIGN(shift_b, e.Features(true_shift));
  return MakeBinary(Opcode::kAdd, product, shift_b);
}

absl::StatusOr<Instruction*> ExpandGrad(Expansion& e) {
  Instruction* x = e.x();
  Instruction* scale = e.bn()->operand(1);
  Instruction* mean = e.bn()->operand(2);
  Instruction* var = e.bn()->operand(3);
  Instruction* dy = e.bn()->operand(4);
  HLOGYM_ASSIGN(n, e.ElementsPerFeature());
  Instruction* zero = e.Scalar(0);
  Instruction* epsilon = e.Scalar(e.bn()->attrs().epsilon);
  HLOGYM_ASSIGN(epsilon_x, e.Splat(epsilon, x->shape()));
  HLOGYM_ASSIGN(epsilon_f, e.Splat(epsilon, scale->shape()));
  HLOGYM_ASSIGN(scale_b, e.Features(scale));
  HLOGYM_ASSIGN(var_b, e.Features(var));
  HLOGYM_ASSIGN(mean_b, e.Features(mean));
  HLOGYM_ASSIGN(var_eps_b, MakeBinary(Opcode::kAdd, var_b, epsilon_x));
  HLOGYM_ASSIGN(rsqrt_b, MakeUnary(Opcode::kRsqrt, var_eps_b));
  HLOGYM_ASSIGN(var_eps, MakeBinary(Opcode::kAdd, var, epsilon_f));
  HLOGYM_ASSIGN(rsqrt, MakeUnary(Opcode::kRsqrt, var_eps));
  HLOGYM_ASSIGN(centered, MakeBinary(Opcode::kSubtract, x, mean_b));
  HLOGYM_ASSIGN(dy_centered, MakeBinary(Opcode::kMultiply, dy, centered));
  HLOGYM_ASSIGN(sum_dy_centered, e.Sum(dy_centered, zero));
  HLOGYM_ASSIGN(grad_offset, e.Sum(dy, zero));
  HLOGYM_ASSIGN(grad_scale, MakeBinary(Opcode::kMultiply, sum_dy_centered, rsqrt));
  HLOGYM_ASSIGN(i2, e.Features(grad_offset));
  HLOGYM_ASSIGN(i3, e.Features(sum_dy_centered));
  HLOGYM_ASSIGN(i4, MakeBinary(Opcode::kMultiply, i3, centered));
  HLOGYM_ASSIGN(var_eps_b2, MakeBinary(Opcode::kAdd, var_b, epsilon_x));
  HLOGYM_ASSIGN(i5, MakeBinary(Opcode::kDivide, i4, var_eps_b2));
  HLOGYM_ASSIGN(scale_rsqrt, MakeBinary(Opcode::kMultiply, scale_b, rsqrt_b));
  HLOGYM_ASSIGN(scale_rsqrt_n, e.Mean(n, scale_rsqrt));
  HLOGYM_ASSIGN(n_b, e.Splat(n, x->shape()));
  HLOGYM_ASSIGN(i1, MakeBinary(Opcode::kMultiply, dy, n_b));
  HLOGYM_ASSIGN(i1_i2, MakeBinary(Opcode::kSubtract, i1, i2));
  HLOGYM_ASSIGN(i6, MakeBinary(Opcode::kSubtract, i1_i2, i5));
  HLOGYM_ASSIGN(grad_x, MakeBinary(Opcode::kMultiply, scale_rsqrt_n, i6));
  Instruction* elements[] = {grad_x, grad_scale, grad_offset};
  return MakeTuple(x->parent(), elements);
}

}  // namespace

bool BatchNormExpander::MayChange(const Module& module) const {
  return ContainsOpcode(
      module, {Opcode::kBatchNormTraining, Opcode::kBatchNormInference, Opcode::kBatchNormGrad});
}

absl::StatusOr<bool> BatchNormExpander::Run(Module& module) {
  bool added_computation = false;
  auto changed = ExpandMatchingInstructions(
      module, name(),
      [](const Instruction* instruction) {
        return instruction->opcode() == Opcode::kBatchNormTraining ||
               instruction->opcode() == Opcode::kBatchNormInference ||
               instruction->opcode() == Opcode::kBatchNormGrad;
      },
      [&](Instruction* batch_norm) -> absl::StatusOr<Instruction*> {
        Expansion expansion(batch_norm);
        HLOGYM_RETURN_IF_ERROR(expansion.Validate());
        absl::StatusOr<Instruction*> result;
        switch (batch_norm->opcode()) {
          case Opcode::kBatchNormTraining:
            result = ExpandTraining(expansion);
            break;
          case Opcode::kBatchNormInference:
            result = ExpandInference(expansion);
            break;
          default:
            result = ExpandGrad(expansion);
            break;
        }
        added_computation |= expansion.added_computation();
        if (result.ok()) (*result)->set_shape(batch_norm->shape());
        return result;
      });
  if (changed.ok() && added_computation) module.SortComputationsCalleesFirst();
  return changed;
}

}  // namespace hlogym
