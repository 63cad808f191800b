#include "passes/expanders/real_imag_expander.h"

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {

absl::StatusOr<bool> RealImagExpander::Run(Module& module) {
  return ExpandMatchingInstructions(
      module, name(),
      [](const Instruction* instruction) {
        return (instruction->opcode() == Opcode::kReal || instruction->opcode() == Opcode::kImag) &&
               instruction->operand_count() == 1 && instruction->operand(0)->shape().IsArray() &&
               !IsComplexType(instruction->operand(0)->shape().element_type());
      },
      [](Instruction* instruction) -> absl::StatusOr<Instruction*> {
        Instruction* operand = instruction->operand(0);
        if (instruction->opcode() == Opcode::kReal) return operand;
        Instruction* zero =
            MakeScalarConstant(instruction->parent(), operand->shape().element_type(), 0.0,
                               instruction->shape().has_layout());
        HLOGYM_ASSIGN(broadcast, MakeBroadcast(zero, instruction->shape().dimensions(), {}));
        broadcast->set_shape(instruction->shape());
        return broadcast;
      });
}

bool RealImagExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReal, Opcode::kImag});
}

}  // namespace hlogym
