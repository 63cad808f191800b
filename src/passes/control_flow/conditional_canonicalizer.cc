#include "passes/control_flow/conditional_canonicalizer.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Gives `value` (not a tuple) the shape (T) of a one-element tuple and makes
// what read it (its users, or its computation as the root) read element 0.
absl::Status ReadThroughTuple(Instruction* value) {
  const std::vector<Instruction*> users = value->users();
  const bool was_root = value->IsRoot();
  value->set_shape(Shape::Tuple({value->shape()}));
  HLOGYM_ASSIGN(element, MakeGetTupleElement(value, 0));
  for (Instruction* user : users) user->ReplaceUsesOfOperand(value, element);
  if (was_root) value->parent()->set_root_instruction(element);
  return absl::OkStatus();
}

bool IsCanonical(const Instruction& conditional) {
  if (!conditional.shape().IsTuple()) return false;
  for (int64_t i = 1; i < conditional.operand_count(); ++i) {
    if (!conditional.operand(i)->shape().IsTuple()) return false;
  }
  for (const Computation* branch : conditional.called_computations()) {
    if (branch->num_parameters() != 1 || !branch->parameter_instruction(0)->shape().IsTuple() ||
        !branch->root_instruction()->shape().IsTuple()) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool ConditionalCanonicalizer::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kConditional, [](const Instruction& conditional) {
    return !IsCanonical(conditional);
  });
}

absl::StatusOr<bool> ConditionalCanonicalizer::Run(Module& module) {
  std::vector<Instruction*> conditionals;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kConditional && !IsCanonical(*instruction)) {
        conditionals.push_back(instruction.get());
      }
    }
  }
  if (conditionals.empty()) return false;
  bool cloned = false;
  for (Instruction* conditional : conditionals) {
    const CallerMap callers = ComputeCallers(module);
    for (Computation*& branch : conditional->mutable_called_computations()) {
      if (branch->num_parameters() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(conditional->name(), ": branch ", branch->name(), " has ",
                         branch->num_parameters(), " parameters, not 1"));
      }
      Instruction* parameter = branch->parameter_instruction(0);
      if (parameter->shape().IsTuple() && branch->root_instruction()->shape().IsTuple()) continue;
      // Branches that only conditionals call are rewritten in place (each
      // conditional needs the same rewrite); one that anything else calls
      // too is copied first.
      auto it = callers.find(branch);
      if (it != callers.end() && it->second.size() > 1 &&
          std::any_of(it->second.begin(), it->second.end(), [](const Instruction* caller) {
            return caller->opcode() != Opcode::kConditional;
          })) {
        branch = CloneComputation(module, *branch);
        parameter = branch->parameter_instruction(0);
        cloned = true;
      }
      // Branch inputs and outputs become one-element tuples.
      if (!parameter->shape().IsTuple()) HLOGYM_RETURN_IF_ERROR(ReadThroughTuple(parameter));
      Instruction* root = branch->root_instruction();
      if (!root->shape().IsTuple()) {
        branch->set_root_instruction(MakeTuple(branch, std::vector<Instruction*>{root}));
      }
    }
    // So do the conditional's operands (not its branch index) and its result.
    for (int64_t i = 1; i < conditional->operand_count(); ++i) {
      Instruction* operand = conditional->operand(i);
      if (operand->shape().IsTuple()) continue;
      conditional->ReplaceOperandWith(
          i, MakeTuple(conditional->parent(), std::vector<Instruction*>{operand}));
    }
    if (!conditional->shape().IsTuple()) HLOGYM_RETURN_IF_ERROR(ReadThroughTuple(conditional));
  }
  if (cloned) module.SortComputationsCalleesFirst();
  return true;
}

}  // namespace hlogym
