#include "passes/simplifiers/gemv_rewriter.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

// A layout is absent or descending (dimension 0 most major).
bool DescendingOrNone(const Shape& shape) {
  if (!shape.has_layout()) return true;
  Shape descending = shape;
  descending.SetDefaultLayout();
  return descending == shape;
}

// `shape` with `dims`, given the default layout when `shape` has one.
Shape Reshaped(const Shape& shape, std::vector<int64_t> dims) {
  Shape result(shape.element_type(), std::move(dims));
  if (shape.has_layout()) result.SetDefaultLayout();
  return result;
}

// XLA adds bitcasts here; hlogym adds the equivalent reshapes (same count,
// default layouts), because XLA's HLO-to-StableHLO import, which hands
// hlogym's text back to XLA, rejects these bitcasts before layout assignment.
Instruction* AddReshape(Computation* computation, Instruction* operand, Shape shape) {
  auto reshape = std::make_unique<Instruction>(Opcode::kReshape, std::move(shape));
  reshape->AppendOperand(operand);
  return computation->AddInstruction(std::move(reshape));
}

bool HasNonContractingDim(const Instruction* operand, size_t batch, size_t contracting) {
  return static_cast<size_t>(operand->shape().rank()) == batch + contracting + 1;
}

absl::StatusOr<bool> RewriteDot(Instruction* dot) {
  if (dot->opcode() != Opcode::kDot || !dot->attrs().dot_dimension_numbers ||
      dot->operand_count() != 2 || !dot->shape().IsArray()) {
    return false;
  }
  const DotDimensionNumbers& dnums = *dot->attrs().dot_dimension_numbers;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const bool lhs_matrix = HasNonContractingDim(lhs, dnums.lhs_batch_dimensions.size(),
                                               dnums.lhs_contracting_dimensions.size());
  const bool rhs_matrix = HasNonContractingDim(rhs, dnums.rhs_batch_dimensions.size(),
                                               dnums.rhs_contracting_dimensions.size());
  if (lhs_matrix == rhs_matrix || !dot->shape().is_static() || dot->shape().rank() < 1) {
    return false;
  }
  if (!DescendingOrNone(lhs->shape()) || !DescendingOrNone(rhs->shape()) ||
      !DescendingOrNone(dot->shape())) {
    return false;
  }
  Computation* computation = dot->parent();
  auto with_trailing_one = [](const Shape& shape) {
    std::vector<int64_t> dims = shape.dimensions();
    dims.push_back(1);
    return Reshaped(shape, dims);
  };
  Instruction* new_lhs =
      lhs_matrix ? lhs : AddReshape(computation, lhs, with_trailing_one(lhs->shape()));
  Instruction* new_rhs =
      rhs_matrix ? rhs : AddReshape(computation, rhs, with_trailing_one(rhs->shape()));
  std::vector<int64_t> out_dims = dot->shape().dimensions();
  if (!lhs_matrix) {
    out_dims.insert(out_dims.end() - 1, 1);
  } else {
    out_dims.push_back(1);
  }
  auto matrix_dot = std::make_unique<Instruction>(Opcode::kDot, Reshaped(dot->shape(), out_dims));
  matrix_dot->mutable_attrs() = dot->attrs();
  matrix_dot->AppendOperand(new_lhs);
  matrix_dot->AppendOperand(new_rhs);
  Instruction* added = computation->AddInstruction(std::move(matrix_dot));
  Instruction* result = AddReshape(computation, added, dot->shape());
  HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(dot, result));
  return true;
}

}  // namespace

absl::StatusOr<bool> GemvRewriter::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      HLOGYM_ASSIGN(rewritten, RewriteDot(instruction));
      changed |= rewritten;
    }
  }
  return changed;
}

bool GemvRewriter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDot});
}

}  // namespace hlogym
