#include "passes/sharding/sharding_remover.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {

absl::StatusOr<bool> ShardingRemover::Run(Module& module) {
  if (!MayChange(module)) return false;
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    bool any = false;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kCustomCall) {
        any = true;
        break;
      }
    }
    if (!any) continue;
    std::vector<Instruction*> order = computation->MakeInstructionPostOrder();
    std::reverse(order.begin(), order.end());
    for (Instruction* instruction : order) {
      if (instruction->opcode() != Opcode::kCustomCall || instruction->operand_count() != 1) {
        continue;
      }
      const std::string& target = instruction->attrs().custom_call_target;
      if (target == "xla.sdy.ShardingGroup") {
        if (instruction->users().empty() && !instruction->IsRoot()) {
          HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(instruction));
          changed = true;
        }
        continue;
      }
      bool replace_with_copy = target == "Sharding" || target == "xla.sdy.FuncResultSharding";
      if (!replace_with_copy && target != "SPMDFullToShardShape" &&
          target != "SPMDShardToFullShape") {
        continue;
      }
      Instruction* operand = instruction->operand(0);
      HLOGYM_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(operand));
      changed = true;
      if (replace_with_copy) {
        auto copy = std::make_unique<Instruction>(Opcode::kCopy, instruction->shape());
        copy->AppendOperand(operand);
        computation->AddInstruction(std::move(copy));
        HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(instruction));
      }
    }
  }
  return changed;
}

// With several partitions the shard_map boundaries change shapes: bypassed,
// they would leave the module ill-typed (XLA runs the partitioner instead).
bool ShardingRemover::MayChange(const Module& module) const {
  return NumPartitions(module) <= 1 && ContainsOpcode(module, {Opcode::kCustomCall});
}

}  // namespace hlogym
