#include "passes/collectives/all_reduce_promotion.h"

#include "absl/strings/str_cat.h"
#include "passes/builders.h"
#include "passes/types/change_op_data_type.h"

namespace hlogym {
namespace {

// Whether `reducer` is one binary op applied to its two parameters, the
// only form a reducer rebuilt from its root opcode keeps.
bool IsBinaryOfParameters(const Computation* reducer) {
  if (reducer == nullptr || reducer->num_parameters() != 2) return false;
  const Instruction* root = reducer->root_instruction();
  if (root->operand_count() != 2 || !IsElementwiseBinary(root->opcode()) ||
      root->opcode() == Opcode::kCompare) {
    return false;
  }
  for (const Instruction* operand : root->operands()) {
    if (operand->opcode() != Opcode::kParameter) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<Pass> MakeAllReducePromotion(
    std::string name, std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to) {
  auto matcher = [](const Instruction* instruction) {
    return (instruction->opcode() == Opcode::kAllReduce ||
            instruction->opcode() == Opcode::kReduceScatter) &&
           IsBinaryOfParameters(instruction->to_apply());
  };
  auto cloner = [](const Instruction* instruction, const Shape& shape,
                   const std::vector<Instruction*>& operands)
      -> absl::StatusOr<std::unique_ptr<Instruction>> {
    auto clone = instruction->CloneWithNewOperands(operands, "");
    clone->mutable_shape() = shape;
    const Computation* reducer = instruction->to_apply();
    clone->mutable_called_computations()[0] = AddScalarBinaryComputation(
        *instruction->parent()->parent(), absl::StrCat(reducer->name(), "_promoted"),
        reducer->root_instruction()->opcode(), shape.element_type(),
        reducer->root_instruction()->shape().has_layout(), "x", "y");
    return clone;
  };
  return std::make_unique<ChangeOpDataType>(
      std::move(name), std::move(from_to), matcher, cloner,
      std::vector<Opcode>{Opcode::kAllReduce, Opcode::kReduceScatter});
}

}  // namespace hlogym
