#include "passes/control_flow/conditional_canonicalizer.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {

bool ConditionalCanonicalizer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConditional});
}

absl::StatusOr<bool> ConditionalCanonicalizer::Run(Module& module) {
  std::vector<Instruction*> conditionals;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kConditional && !instruction->shape().IsTuple()) {
        conditionals.push_back(instruction.get());
      }
    }
  }
  if (conditionals.empty()) return false;
  bool cloned = false;
  for (Instruction* conditional : conditionals) {
    Shape tuple_shape = Shape::Tuple({conditional->shape()});
    for (Computation*& branch : conditional->mutable_called_computations()) {
      if (CountCallers(module, branch) > 1) {
        branch = CloneComputation(module, *branch);
        cloned = true;
      }
      Instruction* root = branch->root_instruction();
      Instruction* tuple = MakeTuple(branch, std::vector<Instruction*>{root});
      tuple->set_shape(tuple_shape);
      branch->set_root_instruction(tuple);
    }
    std::vector<Instruction*> users = conditional->users();
    bool was_root = conditional->IsRoot();
    conditional->set_shape(tuple_shape);
    HLOGYM_ASSIGN(gte, MakeGetTupleElement(conditional, 0));
    for (Instruction* user : users) user->ReplaceUsesOfOperand(conditional, gte);
    if (was_root) conditional->parent()->set_root_instruction(gte);
  }
  if (cloned) module.SortComputationsCalleesFirst();
  return true;
}

}  // namespace hlogym
