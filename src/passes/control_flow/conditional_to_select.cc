#include "passes/control_flow/conditional_to_select.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/control_flow/conditional_simplifier.h"
#include "passes/pass_utils.h"

namespace hlogym {

bool ConditionalToSelect::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConditional});
}

absl::StatusOr<bool> ConditionalToSelect::Run(Module& module) {
  if (!MayChange(module)) return false;
  // Computations in an embedded context, and everything they call.
  absl::flat_hash_set<const Computation*> embedded;
  std::vector<const Computation*> worklist;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (IsControlFlowCaller(instruction->opcode())) continue;
      for (const Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && embedded.insert(callee).second) worklist.push_back(callee);
      }
    }
  }
  while (!worklist.empty()) {
    const Computation* computation = worklist.back();
    worklist.pop_back();
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && embedded.insert(callee).second) worklist.push_back(callee);
      }
    }
  }
  std::vector<Instruction*> conditionals;
  for (const auto& computation : module.computations()) {
    if (!embedded.contains(computation.get())) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kConditional) conditionals.push_back(instruction);
    }
  }
  bool changed = false;
  for (Instruction* conditional : conditionals) {
    HLOGYM_ASSIGN(converted, ConvertConditionalToSelect(conditional));
    changed |= converted;
  }
  return changed;
}

}  // namespace hlogym
