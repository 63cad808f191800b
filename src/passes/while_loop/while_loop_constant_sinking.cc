#include "passes/while_loop/while_loop_constant_sinking.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

// Uses of `gte` other than the body root's pass-through at `index`.
bool HasNonPassThroughUse(const Instruction* gte, int64_t index) {
  for (const Instruction* user : gte->users()) {
    if (!user->IsRoot()) return true;
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == gte && i != index) return true;
    }
  }
  return false;
}

absl::StatusOr<bool> TrySink(Module& module, Instruction* while_op) {
  const Instruction* init = while_op->operand(0);
  Computation* condition = while_op->called_computations()[0];
  Computation* body = while_op->called_computations()[1];
  if (init->opcode() != Opcode::kTuple || body == condition || body->num_parameters() != 1 ||
      condition->num_parameters() != 1) {
    return false;
  }
  // What would change, before copying any computation.
  std::vector<int64_t> body_indices;
  std::vector<int64_t> cond_indices;
  for (Instruction* gte : GetInvariantGtesForWhileBody(*body)) {
    int64_t index = gte->attrs().tuple_index;
    if (init->operand(index)->opcode() != Opcode::kConstant) continue;
    if (HasNonPassThroughUse(gte, index)) body_indices.push_back(index);
    for (const Instruction* user : condition->parameter_instruction(0)->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == index &&
          user->user_count() > 0) {
        cond_indices.push_back(index);
        break;
      }
    }
  }
  if (body_indices.empty() && cond_indices.empty()) return false;
  // As the pinned XLA does, the constants sink into a fresh copy ("NAME.sunk") of each
  // computation they sink into; the copy joins the module last, which decides when
  // simplify-while-loops reaches the loops inside it. The original goes when nothing else
  // calls it.
  for (const int slot : {1, 0}) {  // the body, then the condition
    if ((slot == 1 ? body_indices : cond_indices).empty()) continue;
    Computation* original = while_op->called_computations()[slot];
    while_op->mutable_called_computations()[slot] = CloneComputation(module, *original, ".sunk");
    if (module.CallerCount(original) == 0) {
      HLOGYM_RETURN_IF_ERROR(module.RemoveComputation(original));
    }
  }
  body = while_op->called_computations()[1];
  condition = while_op->called_computations()[0];
  auto sunk_copy = [&](Computation* computation, int64_t index) {
    const Instruction* constant = init->operand(index);
    return computation->AddInstruction(
        constant->CloneWithNewOperands({}, module.UniqueName(constant->name() + ".sunk")));
  };
  for (int64_t index : body_indices) {
    for (Instruction* gte : GetInvariantGtesForWhileBody(*body)) {
      if (gte->attrs().tuple_index != index || !HasNonPassThroughUse(gte, index)) continue;
      Instruction* constant = sunk_copy(body, index);
      std::vector<Instruction*> users = gte->users();
      for (Instruction* user : users) {
        for (int64_t i = 0; i < user->operand_count(); ++i) {
          if (user->operand(i) == gte && !(user->IsRoot() && i == index)) {
            user->ReplaceOperandWith(i, constant);
          }
        }
      }
    }
  }
  for (int64_t index : cond_indices) {
    std::vector<Instruction*> gtes;
    for (Instruction* user : condition->parameter_instruction(0)->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == index &&
          user->user_count() > 0) {
        gtes.push_back(user);
      }
    }
    // A read of the element the constant replaced goes with it, as in XLA's copy.
    for (Instruction* gte : gtes) {
      HLOGYM_RETURN_IF_ERROR(gte->ReplaceAllUsesWith(sunk_copy(condition, index)));
      if (gte->user_count() == 0 && !gte->IsRoot()) {
        HLOGYM_RETURN_IF_ERROR(condition->RemoveInstruction(gte));
      }
    }
  }
  module.SortComputationsCalleesFirst();
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopConstantSinking::Run(Module& module) {
  std::vector<Instruction*> while_ops;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kWhile && instruction->operand_count() == 1 &&
          instruction->called_computations().size() == 2) {
        while_ops.push_back(instruction.get());
      }
    }
  }
  bool changed = false;
  for (Instruction* while_op : while_ops) {
    HLOGYM_ASSIGN(sunk, TrySink(module, while_op));
    changed |= sunk;
  }
  return changed;
}

// Only constants in a loop's init are sunk.
bool WhileLoopConstantSinking::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile}) && ContainsOpcode(module, {Opcode::kConstant});
}

}  // namespace hlogym
