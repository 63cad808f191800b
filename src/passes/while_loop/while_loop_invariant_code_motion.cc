#include "passes/while_loop/while_loop_invariant_code_motion.h"

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

bool NotWorthHoistingIndividually(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kCustomCall &&
      instruction.attrs().custom_call_target == "Sharding") {
    return true;
  }
  switch (instruction.opcode()) {
    case Opcode::kConstant:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<bool> TryHoist(Module& module, Instruction* while_op, SideEffectCache& effects) {
  Computation* condition = while_op->called_computations()[0];
  Computation* body = while_op->called_computations()[1];
  if (!while_op->shape().IsTuple() || body == condition || body->num_parameters() != 1 ||
      condition->num_parameters() != 1 || while_op->HasControlEdges()) {
    return false;
  }
  if (body->root_instruction()->opcode() != Opcode::kTuple) return false;
  std::vector<Instruction*> invariant_gtes = GetInvariantGtesForWhileBody(*body);
  Computation* parent = while_op->parent();
  Instruction* init = while_op->operand(0);
  // Body value -> its copy before the loop.
  absl::flat_hash_map<const Instruction*, Instruction*> hoisted;
  absl::flat_hash_set<const Instruction*> invariant(invariant_gtes.begin(), invariant_gtes.end());
  absl::flat_hash_set<const Instruction*> unhoisted;  // invariant, not copied yet
  std::vector<Instruction*> to_replace;

  // The copy before the loop of invariant body value `value`.
  std::function<absl::StatusOr<Instruction*>(Instruction*)> copy_out =
      [&](Instruction* value) -> absl::StatusOr<Instruction*> {
    if (auto it = hoisted.find(value); it != hoisted.end()) return it->second;
    Instruction* copy;
    if (invariant.contains(value)) {
      int64_t index = value->attrs().tuple_index;
      if (init->opcode() == Opcode::kTuple) {
        copy = init->operand(index);
      } else {
        HLOGYM_ASSIGN(gte, MakeGetTupleElement(init, index));
        copy = gte;
      }
    } else {
      std::vector<Instruction*> operands;
      for (Instruction* operand : value->operands()) {
        HLOGYM_ASSIGN(operand_copy, copy_out(operand));
        operands.push_back(operand_copy);
      }
      copy = parent->AddInstruction(
          value->CloneWithNewOperands(operands, module.UniqueName(value->name())));
      unhoisted.erase(value);
    }
    hoisted[value] = copy;
    return copy;
  };

  Instruction* root = body->root_instruction();
  for (Instruction* instruction : body->MakeInstructionPostOrder()) {
    if (instruction == root || instruction->opcode() == Opcode::kParameter ||
        invariant.contains(instruction) || instruction->HasControlEdges() ||
        effects.HasSideEffect(instruction)) {
      continue;
    }
    bool operands_invariant = true;
    for (const Instruction* operand : instruction->operands()) {
      if (!invariant.contains(operand) && !unhoisted.contains(operand) &&
          !hoisted.contains(operand)) {
        operands_invariant = false;
        break;
      }
    }
    if (!operands_invariant) continue;
    if (NotWorthHoistingIndividually(*instruction)) {
      unhoisted.insert(instruction);
      continue;
    }
    HLOGYM_ASSIGN(copy, copy_out(instruction));
    to_replace.push_back(instruction);
  }
  if (to_replace.empty()) return false;

  // Make the hoisted values live in: append them to the loop state.
  const Computation* original_body = body;
  const bool cloned = UnshareLoopComputations(module, while_op);
  body = while_op->called_computations()[1];
  condition = while_op->called_computations()[0];
  std::vector<Instruction*> targets = to_replace;
  if (body != original_body) {
    // CloneComputation keeps the instruction order: map by position.
    absl::flat_hash_map<const Instruction*, int64_t> position;
    int64_t k = 0;
    for (const auto& instruction : original_body->instructions()) position[instruction.get()] = k++;
    std::vector<Instruction*> copies;
    for (const auto& instruction : body->instructions()) copies.push_back(instruction.get());
    for (Instruction*& target : targets) target = copies[position.at(target)];
  }
  const int64_t n = while_op->shape().tuple_shapes_size();
  // The old, narrower state read out of a widened one: a tuple of its first n
  // elements.
  auto old_state_of = [&](Instruction* wide) -> absl::StatusOr<Instruction*> {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < n; ++i) {
      HLOGYM_ASSIGN(gte, MakeGetTupleElement(wide, i));
      elements.push_back(gte);
    }
    Instruction* tuple = MakeTuple(wide->parent(), elements);
    tuple->set_shape(while_op->shape());
    return tuple;
  };
  Shape new_shape = while_op->shape();
  std::vector<Instruction*> outside;
  for (Instruction* instruction : to_replace) {
    Instruction* value = hoisted.at(instruction);
    outside.push_back(value);
    new_shape.mutable_tuple_shapes().push_back(value->shape());
  }
  Instruction* body_param = body->parameter_instruction(0);
  for (Computation* computation : {body, condition}) {
    Instruction* param = computation->parameter_instruction(0);
    std::vector<Instruction*> whole_state_users;
    for (Instruction* user : param->users()) {
      if (user->opcode() != Opcode::kGetTupleElement) whole_state_users.push_back(user);
    }
    param->set_shape(new_shape);
    if (whole_state_users.empty()) continue;
    // What reads the whole state (a call of the frontend's own condition,
    // say) still gets the old, narrower tuple, as in XLA's widening.
    HLOGYM_ASSIGN(narrow, old_state_of(param));
    for (Instruction* user : whole_state_users) {
      for (int64_t k = 0; k < user->operand_count(); ++k) {
        if (user->operand(k) == param) user->ReplaceOperandWith(k, narrow);
      }
    }
    if (computation->root_instruction() == param) computation->set_root_instruction(narrow);
  }
  std::vector<Instruction*> new_gtes;
  for (size_t j = 0; j < targets.size(); ++j) {
    // Like XLA's WhileUtil::MakeInstructionsLiveIn: one read of the new
    // element feeds the body's uses and a second one passes it through to
    // the root (CSE merges the two later); a read left without users goes
    // with the dead code below.
    const int64_t index = n + static_cast<int64_t>(j);
    HLOGYM_ASSIGN(in, MakeGetTupleElement(body_param, index));
    absl::Status status = targets[j]->ReplaceAllUsesWith(in);
    if (!status.ok()) return status;
    HLOGYM_ASSIGN(through, MakeGetTupleElement(body_param, index));
    new_gtes.push_back(through);
  }
  root = body->root_instruction();
  std::vector<Instruction*> root_operands = root->operands();
  root_operands.insert(root_operands.end(), new_gtes.begin(), new_gtes.end());
  Instruction* new_root = MakeTuple(body, root_operands);
  new_root->set_shape(new_shape);
  body->set_root_instruction(new_root);
  // Drop what is dead now (the old root, the hoisted instructions, ...).
  std::vector<Instruction*> order = body->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* instruction = *it;
    if (instruction == new_root || instruction->opcode() == Opcode::kParameter ||
        instruction->user_count() > 0 || instruction->HasControlEdges() ||
        effects.HasSideEffect(instruction)) {
      continue;
    }
    absl::Status status = body->RemoveInstruction(instruction);
    if (!status.ok()) return status;
  }

  std::vector<Instruction*> init_elements;
  for (int64_t i = 0; i < n; ++i) {
    if (init->opcode() == Opcode::kTuple) {
      init_elements.push_back(init->operand(i));
    } else {
      HLOGYM_ASSIGN(gte, MakeGetTupleElement(init, i));
      init_elements.push_back(gte);
    }
  }
  init_elements.insert(init_elements.end(), outside.begin(), outside.end());
  Instruction* new_init = MakeTuple(parent, init_elements);
  new_init->set_shape(new_shape);
  auto replacement =
      while_op->CloneWithNewOperands({new_init}, module.UniqueName(while_op->name()));
  replacement->set_shape(new_shape);
  Instruction* new_while = parent->AddInstruction(std::move(replacement));
  bool all_gtes = !while_op->IsRoot();
  for (const Instruction* user : while_op->users()) {
    all_gtes &= user->opcode() == Opcode::kGetTupleElement;
  }
  if (all_gtes) {
    std::vector<Instruction*> users = while_op->users();
    for (Instruction* user : users) user->ReplaceOperandWith(0, new_while);
  } else {
    HLOGYM_ASSIGN(tuple, old_state_of(new_while));
    absl::Status status = while_op->ReplaceAllUsesWith(tuple);
    if (!status.ok()) return status;
  }
  HLOGYM_RETURN_IF_ERROR(parent->RemoveInstructionAndUnusedOperands(while_op));
  if (cloned) module.SortComputationsCalleesFirst();
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::Run(Module& module) {
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, std::string(name()));
  if (!run.MustVisitModule()) return false;
  std::vector<Instruction*> while_ops;
  for (const auto& computation : module.computations()) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kWhile && instruction->operand_count() == 1 &&
          instruction->called_computations().size() == 2) {
        while_ops.push_back(instruction);
      }
    }
  }
  bool changed = false;
  for (Instruction* while_op : while_ops) {
    SideEffectCache effects;
    HLOGYM_ASSIGN(hoisted, TryHoist(module, while_op, effects));
    changed |= hoisted;
  }
  run.Complete();
  return changed;
}

bool WhileLoopInvariantCodeMotion::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile});
}

}  // namespace hlogym
