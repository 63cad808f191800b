#include "passes/sharding/strip_memory_placement_annotations.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

bool IsPlacementAnnotation(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  const std::string& target = instruction.attrs().custom_call_target;
  return target == "annotate_device_placement" || target == "MoveToHost" ||
         target == "MoveToDevice";
}

}  // namespace

absl::StatusOr<bool> StripMemoryPlacementAnnotations::Run(Module& module) {
  // Validate first so that bad input leaves the module as it was.
  std::vector<std::vector<Instruction*>> work;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> found;
    for (const auto& instruction : computation->instructions()) {
      if (!IsPlacementAnnotation(*instruction)) continue;
      if (instruction->operand_count() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "strip-memory-placement-annotations: ", instruction->name(), ": custom call \"",
            instruction->attrs().custom_call_target, "\" must have exactly one operand, it has ",
            instruction->operand_count()));
      }
      found.push_back(instruction.get());
    }
    if (!found.empty()) work.push_back(computation->MakeInstructionPostOrder());
  }
  bool changed = false;
  for (const std::vector<Instruction*>& order : work) {
    for (Instruction* instruction : order) {
      if (!IsPlacementAnnotation(*instruction)) continue;
      Instruction* operand = instruction->operand(0);
      if (const RawAttribute* sharding = instruction->attrs().FindRaw("sharding");
          sharding != nullptr && operand->attrs().FindRaw("sharding") == nullptr) {
        operand->mutable_attrs().SetRaw("sharding", sharding->value);
      }
      instruction->DropAllControlDeps();
      HLOGYM_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(operand));
      HLOGYM_RETURN_IF_ERROR(instruction->parent()->RemoveInstruction(instruction));
      changed = true;
    }
  }
  return changed;
}

bool StripMemoryPlacementAnnotations::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

}  // namespace hlogym
