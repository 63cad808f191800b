#include "passes/control_flow/map_inliner.h"

#include <numeric>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

absl::StatusOr<bool> TryInlineMap(Module& module, Instruction* map) {
  const Computation* callee = map->to_apply();
  // One instruction besides the parameters (none when the root is one).
  if (callee == nullptr ||
      callee->instruction_count() - callee->num_parameters() >
          (callee->root_instruction()->opcode() == Opcode::kParameter ? 0 : 1) ||
      !map->control_predecessors().empty() || !map->control_successors().empty()) {
    return false;
  }
  Computation* parent = map->parent();
  const Instruction* root = callee->root_instruction();
  Instruction* replacement = nullptr;
  if (root->opcode() == Opcode::kParameter) {
    replacement = map->operand(root->attrs().parameter_number);
    if (!replacement->shape().Compatible(map->shape())) return false;
  } else if (root->opcode() == Opcode::kConstant) {
    if (!root->shape().IsScalar()) return false;
    Instruction* constant =
        parent->AddInstruction(root->CloneWithNewOperands({}, module.UniqueName(root->name())));
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(constant, map->shape().dimensions(), {}));
    replacement = broadcast;
  } else if (IsElementwise(root->opcode())) {
    std::vector<Instruction*> operands;
    for (const Instruction* operand : root->operands()) {
      if (operand->opcode() != Opcode::kParameter) return false;
      operands.push_back(map->operand(operand->attrs().parameter_number));
    }
    auto clone = root->CloneWithNewOperands(operands, module.UniqueName(root->name()));
    clone->set_shape(map->shape());
    replacement = parent->AddInstruction(std::move(clone));
  } else {
    return false;
  }
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(map, replacement));
  return true;
}

}  // namespace

absl::StatusOr<bool> MapInliner::Run(Module& module) {
  std::vector<Instruction*> maps;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kMap) maps.push_back(instruction.get());
    }
  }
  bool changed = false;
  for (Instruction* map : maps) {
    HLOGYM_ASSIGN(inlined, TryInlineMap(module, map));
    changed |= inlined;
  }
  return changed;
}

bool MapInliner::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kMap});
}

}  // namespace hlogym
