#include "passes/expanders/cse_barrier_expander.h"

#include <algorithm>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {

absl::StatusOr<bool> OptimizationBarrierExpander::Run(Module& module) {
  std::vector<Instruction*> barriers;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kOptimizationBarrier) {
        barriers.push_back(instruction.get());
      }
    }
  }
  for (Instruction* barrier : barriers) {
    Instruction* operand = barrier->operand(0);
    auto has_edge = [](const Instruction* from, const Instruction* to) {
      const auto& successors = from->control_successors();
      return std::find(successors.begin(), successors.end(), to) != successors.end();
    };
    for (Instruction* predecessor : std::vector<Instruction*>(barrier->control_predecessors())) {
      if (predecessor != operand && !has_edge(predecessor, operand)) {
        predecessor->AddControlDependencyTo(operand);
      }
    }
    for (Instruction* successor : std::vector<Instruction*>(barrier->control_successors())) {
      if (successor != operand && !has_edge(operand, successor)) {
        operand->AddControlDependencyTo(successor);
      }
    }
    barrier->DropAllControlDeps();
    HLOGYM_RETURN_IF_ERROR(barrier->ReplaceAllUsesWith(operand));
    HLOGYM_RETURN_IF_ERROR(barrier->parent()->RemoveInstruction(barrier));
  }
  return !barriers.empty();
}

bool OptimizationBarrierExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kOptimizationBarrier});
}

}  // namespace hlogym
