#include "passes/types/change_op_data_type.h"

#include <optional>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// The element type all operands share, if they share one.
std::optional<PrimitiveType> UniformOperandType(const Instruction* instruction) {
  std::optional<PrimitiveType> type;
  for (const Instruction* operand : instruction->operands()) {
    if (type.has_value() && operand->shape().element_type() != *type) return std::nullopt;
    type = operand->shape().element_type();
  }
  return type;
}

}  // namespace

bool ChangeOpDataType::MayChange(const Module& module) const {
  return opcodes_.empty() || ContainsOpcode(module, opcodes_);
}

absl::StatusOr<bool> ChangeOpDataType::Run(Module& module) {
  auto target_type = [&](const Instruction* instruction) -> std::optional<PrimitiveType> {
    if (instruction->opcode() == Opcode::kParameter || !instruction->shape().IsArray() ||
        !matcher_(instruction)) {
      return std::nullopt;
    }
    std::optional<PrimitiveType> from = UniformOperandType(instruction);
    if (!from.has_value()) return std::nullopt;
    for (const auto& [type, to] : from_to_) {
      if (type == *from) return to;
    }
    return std::nullopt;
  };
  return ExpandMatchingInstructions(
      module, name(),
      [&](const Instruction* instruction) { return target_type(instruction).has_value(); },
      [&](Instruction* instruction) -> absl::StatusOr<Instruction*> {
        const PrimitiveType to = *target_type(instruction);
        std::vector<Instruction*> operands;
        for (Instruction* operand : instruction->operands()) {
          HLOGYM_ASSIGN(convert, MakeConvert(operand, to));
          operands.push_back(convert);
        }
        Shape shape = instruction->shape();
        shape.set_element_type(to);
        std::unique_ptr<Instruction> clone;
        if (cloner_) {
          HLOGYM_ASSIGN(cloned, cloner_(instruction, shape, operands));
          clone = std::move(cloned);
        } else {
          clone = instruction->CloneWithNewOperands(operands, "");
          clone->mutable_shape() = shape;
        }
        Computation* computation = instruction->parent();
        clone->set_name(computation->parent()->UniqueName(instruction->name()));
        Instruction* changed = computation->AddInstruction(std::move(clone));
        if (to == instruction->shape().element_type()) return changed;
        return MakeConvert(changed, instruction->shape().element_type());
      });
}

std::unique_ptr<Pass> MakeCpuChangeOpDataType() {
  return std::make_unique<ChangeOpDataType>(
      "change-op-data-type",
      std::vector<std::pair<PrimitiveType, PrimitiveType>>{
          {PrimitiveType::kF16, PrimitiveType::kF32}},
      [](const Instruction* instruction) {
        return instruction->opcode() == Opcode::kDot ||
               instruction->opcode() == Opcode::kConvolution;
      },
      /*cloner=*/nullptr, std::vector<Opcode>{Opcode::kDot, Opcode::kConvolution});
}

}  // namespace hlogym
