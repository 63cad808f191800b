#include "passes/dce.h"

#include <algorithm>
#include <vector>

#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsRemovable(const Instruction* instruction, SideEffectCache& effects) {
  if (!instruction->users().empty() || instruction->IsRoot()) return false;
  if (instruction->opcode() == Opcode::kParameter) return false;
  if (!instruction->control_predecessors().empty() ||
      !instruction->control_successors().empty()) {
    return false;
  }
  if (instruction->opcode() == Opcode::kCustomCall &&
      instruction->attrs().custom_call_target == "Sharding" && instruction->operand_count() > 0) {
    const Instruction* operand = instruction->operand(0);
    if (operand->IsRoot() || operand->opcode() == Opcode::kParameter ||
        operand->user_count() != 1) {
      return false;
    }
  }
  return !effects.HasSideEffect(instruction);
}

}  // namespace

absl::StatusOr<bool> HloDce::Run(Module& module) {
  bool changed = false;
  SideEffectCache effects;
  std::vector<Computation*> order = module.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());  // callers first, as XLA visits them
  for (Computation* computation : order) {
    // Cheap exit: nothing dead.
    bool any_dead = false;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->users().empty() && instruction.get() != computation->root_instruction() &&
          instruction->opcode() != Opcode::kParameter) {
        any_dead = true;
        break;
      }
    }
    if (!any_dead) continue;
    std::vector<Instruction*> post_order = computation->MakeInstructionPostOrder();
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      Instruction* instruction = *it;
      if (!IsRemovable(instruction, effects)) continue;
      absl::Status status = computation->RemoveInstruction(instruction);
      if (!status.ok()) return status;
      changed = true;
    }
  }
  absl::StatusOr<bool> removed = RemoveUnreachableComputations(module);
  if (!removed.ok()) return removed.status();
  return changed || *removed;
}

}  // namespace hlogym
