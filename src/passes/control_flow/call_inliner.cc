#include "passes/control_flow/call_inliner.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"
#include "passes/sharding/shardy_xla.h"
#include "passes/simplifiers/dce.h"

namespace hlogym {
namespace {

// Copies the callee's instructions into the caller and replaces `call`.
absl::Status InlineCall(Module& module, Instruction* call) {
  Computation* caller = call->parent();
  const Computation* callee = call->to_apply();
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t i = 0; i < callee->num_parameters(); ++i) {
    const Instruction* parameter = callee->parameter_instruction(i);
    if (parameter == nullptr || i >= call->operand_count()) {
      return absl::InvalidArgumentError("call " + call->name() + " does not match its callee " +
                                        callee->name());
    }
    map[parameter] = call->operand(i);
  }
  std::vector<Instruction*> copies;
  for (Instruction* instruction : callee->MakeInstructionPostOrder()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    operands.reserve(instruction->operand_count());
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    Instruction* copy = caller->AddInstruction(
        instruction->CloneWithNewOperands(operands, module.UniqueName(instruction->name())));
    map[instruction] = copy;
    copies.push_back(copy);
  }
  for (Instruction* instruction : callee->MakeInstructionPostOrder()) {
    for (Instruction* predecessor : instruction->control_predecessors()) {
      map.at(predecessor)->AddControlDependencyTo(map.at(instruction));
    }
  }
  Instruction* new_root = map.at(callee->root_instruction());
  for (Instruction* predecessor : call->control_predecessors()) {
    for (Instruction* copy : copies) predecessor->AddControlDependencyTo(copy);
  }
  for (Instruction* successor : call->control_successors()) {
    new_root->AddControlDependencyTo(successor);
  }
  call->DropAllControlDeps();
  HLOGYM_RETURN_IF_ERROR(call->ReplaceAllUsesWith(new_root));
  return caller->RemoveInstruction(call);
}

}  // namespace

bool CallInliner::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCall});
}

absl::StatusOr<bool> CallInliner::Run(Module& module) {
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, StrCat(name(), ":", single_call_site_ ? 1 : 0));
  if (!run.MustVisitModule()) return false;
  if (!MayChange(module)) return false;

  auto callers = ComputeCallers(module);
  bool changed = false;
  // Callees before callers: a callee's own calls are inlined before it is
  // copied anywhere.
  for (Computation* computation : module.MakeComputationPostOrder()) {
    // Counted now: inlining a callee brings its calls along.
    if (computation->opcode_count(Opcode::kCall) == 0) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != Opcode::kCall || instruction->to_apply() == nullptr) continue;
      if (single_call_site_ && callers[instruction->to_apply()].size() != 1) continue;
      // As XLA's: a shard_map body stays a call until it is renamed inlineable.
      if (IsShardyManualComputationBody(*instruction->to_apply())) continue;
      HLOGYM_RETURN_IF_ERROR(InlineCall(module, instruction));
      changed = true;
    }
  }
  if (changed) {
    HLOGYM_RETURN_IF_ERROR(HloDce().Run(module).status());
  }
  run.Complete();
  return changed;
}

}  // namespace hlogym
