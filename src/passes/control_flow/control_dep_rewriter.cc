#include "passes/control_flow/control_dep_rewriter.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

bool IsControlDep(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall &&
         instruction.attrs().custom_call_target == "control_dep";
}

absl::Status Bad(const Instruction& instruction, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("control-dep-rewriter: ", instruction.name(), ": ", why));
}

// Whether `from` depends on `target` through operand or control edges.
bool DependsOn(const Instruction* from, const Instruction* target) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack = {from};
  while (!stack.empty()) {
    const Instruction* current = stack.back();
    stack.pop_back();
    if (current == target) return true;
    if (!seen.insert(current).second) continue;
    for (const Instruction* operand : current->operands()) stack.push_back(operand);
    for (const Instruction* predecessor : current->control_predecessors()) {
      stack.push_back(predecessor);
    }
  }
  return false;
}

}  // namespace

bool ControlDepRewriter::MayChange(const Module& module) const {
  // Only "control_dep" custom calls are rewritten.
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

absl::StatusOr<bool> ControlDepRewriter::Run(Module& module) {
  std::vector<Instruction*> found;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!IsControlDep(*instruction)) continue;
      if (instruction->operand_count() != 2) {
        return Bad(*instruction, absl::StrCat("a control_dep custom call needs 2 operands, it has ",
                                              instruction->operand_count()));
      }
      if (instruction->IsRoot() || !instruction->users().empty()) {
        return Bad(*instruction, "a control_dep custom call cannot be used or be the root");
      }
      if (instruction->operand(0) == instruction->operand(1)) {
        return Bad(*instruction, "a control_dep custom call needs two different operands");
      }
      found.push_back(instruction.get());
    }
  }
  // Add the edges, undoing them if one would close a cycle.
  std::vector<std::pair<Instruction*, Instruction*>> added;
  for (Instruction* control_dep : found) {
    Instruction* src = control_dep->operand(0);
    Instruction* dst = control_dep->operand(1);
    bool present = false;
    for (const Instruction* successor : src->control_successors()) present |= successor == dst;
    if (present) continue;
    if (DependsOn(src, dst)) {
      for (auto& [from, to] : added) from->RemoveControlDependencyTo(to);
      return Bad(*control_dep, absl::StrCat("the control edge ", src->name(), " -> ", dst->name(),
                                            " would form a cycle"));
    }
    src->AddControlDependencyTo(dst);
    added.emplace_back(src, dst);
  }
  for (Instruction* control_dep : found) {
    HLOGYM_RETURN_IF_ERROR(control_dep->parent()->RemoveInstruction(control_dep));
  }
  return !found.empty();
}

}  // namespace hlogym
