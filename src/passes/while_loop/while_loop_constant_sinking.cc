#include "passes/while_loop/while_loop_constant_sinking.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

// Replaces `gte`'s uses by `constant`, except the body root's pass-through at `index`,
// which keeps the element invariant.
void ReplaceUsesKeepingInvariance(Instruction* gte, Instruction* constant, int64_t index) {
  std::vector<Instruction*> users = gte->users();
  for (Instruction* user : users) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == gte && !(user->IsRoot() && i == index)) {
        user->ReplaceOperandWith(i, constant);
      }
    }
  }
}

// Sinks the constants of `while_op`'s init into a fresh copy ("NAME.sunk") of its body or
// condition, as the pinned XLA does: each copy is made when the first constant needs it and joins
// the module last, which decides when later passes reach the loops inside it. The originals stay
// until the run ends.
absl::StatusOr<bool> TrySink(Module& module, Instruction* while_op) {
  const Instruction* init = while_op->operand(0);
  if (init->opcode() != Opcode::kTuple) return false;
  Computation* body = while_op->called_computations()[1];
  Computation* condition = while_op->called_computations()[0];
  if (body == condition || body->num_parameters() != 1 || condition->num_parameters() != 1) {
    return false;
  }
  // The copies are made from the originals, so what to sink is read there.
  std::vector<Instruction*> invariant_gtes = GetInvariantGtesForWhileBody(*body);
  Computation* body_copy = nullptr;
  Computation* condition_copy = nullptr;
  absl::flat_hash_map<const Instruction*, Instruction*> body_copies;
  absl::flat_hash_map<const Instruction*, Instruction*> condition_copies;
  auto sunk_constant = [&](Computation* computation, int64_t index) {
    const Instruction* constant = init->operand(index);
    return computation->AddInstruction(
        constant->CloneWithNewOperands({}, module.UniqueName(constant->name() + ".sunk")));
  };
  for (Instruction* gte : invariant_gtes) {
    const int64_t index = gte->attrs().tuple_index;
    if (init->operand(index)->opcode() != Opcode::kConstant) continue;
    // A user beside the root's pass-through.
    if (gte->user_count() > 1) {
      if (body_copy == nullptr) {
        body_copy = CloneComputation(module, *body, ".sunk", &body_copies);
        while_op->mutable_called_computations()[1] = body_copy;
      }
      ReplaceUsesKeepingInvariance(body_copies.at(gte), sunk_constant(body_copy, index), index);
    }
    for (const Instruction* read : condition->parameter_instruction(0)->users()) {
      if (read->opcode() != Opcode::kGetTupleElement || read->attrs().tuple_index != index ||
          read->user_count() == 0) {
        continue;
      }
      if (condition_copy == nullptr) {
        condition_copy = CloneComputation(module, *condition, ".sunk", &condition_copies);
        while_op->mutable_called_computations()[0] = condition_copy;
      }
      // The read the constant replaced goes with it, as in XLA's copy.
      Instruction* read_copy = condition_copies.at(read);
      HLOGYM_RETURN_IF_ERROR(read_copy->ReplaceAllUsesWith(sunk_constant(condition_copy, index)));
      if (!read_copy->IsRoot()) {
        HLOGYM_RETURN_IF_ERROR(condition_copy->RemoveInstruction(read_copy));
      }
    }
  }
  return body_copy != nullptr || condition_copy != nullptr;
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::Run(Module& module) {
  // Outer loops before the loops in their bodies, as XLA walks them (a stack from the entry, each
  // computation's callees pushed after its loops sink): a constant sunk into an outer body feeds
  // the init of the loops inside it, which then sink it in the same run.
  bool changed = false;
  std::vector<Computation*> agenda = {module.entry_computation()};
  absl::flat_hash_set<const Computation*> visited;
  while (!agenda.empty()) {
    Computation* computation = agenda.back();
    agenda.pop_back();
    if (computation == nullptr || !visited.insert(computation).second) continue;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kWhile && instruction->operand_count() == 1 &&
          instruction->called_computations().size() == 2) {
        HLOGYM_ASSIGN(sunk, TrySink(module, instruction.get()));
        changed |= sunk;
      }
      for (Computation* callee : instruction->called_computations()) agenda.push_back(callee);
    }
  }
  // The originals nothing calls any more go, and anything else unreachable with them.
  HLOGYM_ASSIGN(removed, RemoveUnreachableComputations(module));
  if (changed) module.SortComputationsCalleesFirst();
  return changed || removed;
}

// Only constants in a loop's init are sunk; unreachable computations go on every run.
bool WhileLoopConstantSinking::MayChange(const Module& module) const {
  return (ContainsOpcode(module, {Opcode::kWhile}) &&
          ContainsOpcode(module, {Opcode::kConstant})) ||
         HasUnreachableComputations(module);
}

}  // namespace hlogym
