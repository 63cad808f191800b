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
#include "passes/simplifiers/dce.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/while_loop/while_loop_analysis.h"
#include "passes/while_loop/while_util.h"

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

// The old, narrower loop state (`old_shape`, its first elements) read out of
// a widened one: a tuple of reads.
absl::StatusOr<Instruction*> NarrowState(Instruction* wide, const Shape& old_shape) {
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < old_shape.tuple_shapes_size(); ++i) {
    HLOGYM_ASSIGN(gte, MakeGetTupleElement(wide, i));
    elements.push_back(gte);
  }
  Instruction* tuple = MakeTuple(wide->parent(), elements);
  tuple->set_shape(old_shape);
  return tuple;
}

// The body instructions to hoist, in post order, and for every invariant body
// value they read, its copy before the loop (in the loop's computation).
struct Hoisting {
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  std::vector<Instruction*> hoisted;
};

// Copies out every body instruction whose operands are loop-invariant (state
// elements the body passes through unchanged, or other such instructions),
// except side effects, control edges and the cheap ops not worth a loop-state
// element of their own; those follow a hoisted user out instead.
absl::StatusOr<Hoisting> CopyInvariantsOut(Module& module, Instruction* while_op,
                                           SideEffectCache& effects) {
  Computation* body = while_op->called_computations()[1];
  Computation* parent = while_op->parent();
  Instruction* init = while_op->operand(0);
  // Reads of array-shaped state elements the body passes through unchanged;
  // XLA gives up on a loop with none (it does not look for constant-only
  // work then: a BFGS loop's identity matrix stays in its body).
  absl::flat_hash_set<const Instruction*> invariant;
  for (Instruction* gte : GetInvariantGtesForWhileBody(*body)) {
    if (gte->shape().IsArray()) invariant.insert(gte);
  }
  absl::flat_hash_set<const Instruction*> unhoisted;  // invariant, not copied yet
  Hoisting hoisting;
  if (invariant.empty()) return hoisting;

  // The copy before the loop of invariant body value `value`.
  std::function<absl::StatusOr<Instruction*>(Instruction*)> copy_out =
      [&](Instruction* value) -> absl::StatusOr<Instruction*> {
    if (auto it = hoisting.copies.find(value); it != hoisting.copies.end()) return it->second;
    Instruction* copy;
    if (invariant.contains(value)) {
      // A read of the init, as XLA copies it, not the init tuple's operand:
      // an enclosing loop, processed later in this run, finds a read of a
      // tuple that varies in it not invariant (tuple-simplifier folds the
      // read after the run).
      HLOGYM_ASSIGN(element, MakeGetTupleElement(init, value->attrs().tuple_index));
      copy = element;
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
    hoisting.copies[value] = copy;
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
          !hoisting.copies.contains(operand)) {
        operands_invariant = false;
        break;
      }
    }
    if (!operands_invariant) continue;
    if (NotWorthHoistingIndividually(*instruction)) {
      unhoisted.insert(instruction);
      continue;
    }
    HLOGYM_RETURN_IF_ERROR(copy_out(instruction).status());
    hoisting.hoisted.push_back(instruction);
  }
  return hoisting;
}

// Gives the parameters of `computation` (the loop's body or condition) the
// widened state shape; what reads the whole state (a call of the frontend's
// own condition, say) still gets the old, narrower tuple, as in XLA's
// widening. XLA widens by inlining a call of the old computation on a tuple
// of reads of the wide parameter, one per element, so each element is read
// once afterwards: repeated reads of an element become one.
absl::Status WidenParameter(Computation* computation, const Shape& old_shape,
                            const Shape& new_shape) {
  Instruction* param = computation->parameter_instruction(0);
  std::vector<Instruction*> whole_state_users;
  absl::flat_hash_map<int64_t, Instruction*> first_read;
  for (Instruction* user : std::vector<Instruction*>(param->users())) {
    if (user->opcode() != Opcode::kGetTupleElement) {
      whole_state_users.push_back(user);
      continue;
    }
    auto [first, inserted] = first_read.emplace(user->attrs().tuple_index, user);
    if (inserted || user->HasControlEdges()) continue;
    HLOGYM_RETURN_IF_ERROR(user->ReplaceAllUsesWith(first->second));  // the root too
    HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(user));
  }
  param->set_shape(new_shape);
  if (whole_state_users.empty()) return absl::OkStatus();
  HLOGYM_ASSIGN(narrow, NarrowState(param, old_shape));
  for (Instruction* user : whole_state_users) {
    user->ReplaceUsesOfOperand(param, narrow);
  }
  if (computation->root_instruction() == param) computation->set_root_instruction(narrow);
  return absl::OkStatus();
}

// Removes the body's instructions nothing reads any more (the old root, the
// hoisted instructions, ...), but not side effects or control edges.
absl::Status RemoveDeadBodyInstructions(Computation* body, SideEffectCache& effects) {
  std::vector<Instruction*> order = body->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* instruction = *it;
    if (instruction == body->root_instruction() || instruction->opcode() == Opcode::kParameter ||
        instruction->user_count() > 0 || instruction->HasControlEdges() ||
        effects.HasSideEffect(instruction)) {
      continue;
    }
    HLOGYM_RETURN_IF_ERROR(body->RemoveInstruction(instruction));
  }
  return absl::OkStatus();
}

// Replaces `while_op` by a loop whose state also carries `extra` (values of
// its computation) after the old elements; its users read the old elements.
absl::Status ReplaceWithWiderLoop(Module& module, Instruction* while_op,
                                  const std::vector<Instruction*>& extra, const Shape& new_shape) {
  Computation* parent = while_op->parent();
  Instruction* init = while_op->operand(0);
  std::vector<Instruction*> init_elements;
  for (int64_t i = 0; i < while_op->shape().tuple_shapes_size(); ++i) {
    HLOGYM_ASSIGN(element, InitElement(init, i));
    init_elements.push_back(element);
  }
  init_elements.insert(init_elements.end(), extra.begin(), extra.end());
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
    HLOGYM_ASSIGN(tuple, NarrowState(new_while, while_op->shape()));
    HLOGYM_RETURN_IF_ERROR(while_op->ReplaceAllUsesWith(tuple));
  }
  return parent->RemoveInstructionAndUnusedOperands(while_op);
}

// Makes the hoisted values live in: each becomes one more element of the loop
// state, initialized with its copy before the loop and passed through by the
// body, whose uses of the hoisted instruction read that element instead.
absl::Status MakeHoistedValuesLiveIn(Module& module, Instruction* while_op,
                                     const Hoisting& hoisting, SideEffectCache& effects) {
  const Computation* original_body = while_op->called_computations()[1];
  const bool cloned = UnshareLoopComputations(module, while_op);
  Computation* body = while_op->called_computations()[1];
  Computation* condition = while_op->called_computations()[0];
  std::vector<Instruction*> targets = hoisting.hoisted;
  if (body != original_body) {
    // CloneComputation keeps the instruction order: map by position.
    absl::flat_hash_map<const Instruction*, int64_t> position;
    int64_t k = 0;
    for (const auto& instruction : original_body->instructions()) position[instruction.get()] = k++;
    std::vector<Instruction*> copies;
    for (const auto& instruction : body->instructions()) copies.push_back(instruction.get());
    for (Instruction*& target : targets) target = copies[position.at(target)];
  }
  const Shape old_shape = while_op->shape();
  const int64_t n = old_shape.tuple_shapes_size();
  Shape new_shape = old_shape;
  std::vector<Instruction*> outside;
  for (Instruction* instruction : hoisting.hoisted) {
    Instruction* value = hoisting.copies.at(instruction);
    outside.push_back(value);
    new_shape.mutable_tuple_shapes().push_back(value->shape());
  }
  for (Computation* computation : {body, condition}) {
    HLOGYM_RETURN_IF_ERROR(WidenParameter(computation, old_shape, new_shape));
  }
  // XLA makes the widened loop from new copies of its condition and body:
  // they join the end of its list of computations.
  module.NoteRecreated(condition);
  module.NoteRecreated(body);
  Instruction* body_param = body->parameter_instruction(0);
  std::vector<Instruction*> new_gtes;
  for (size_t j = 0; j < targets.size(); ++j) {
    // Like XLA's WhileUtil::MakeInstructionsLiveIn: one read of the new
    // element feeds the body's uses and a second one passes it through to
    // the root (CSE merges the two later); a read left without users goes
    // with the dead code below.
    const int64_t index = n + static_cast<int64_t>(j);
    HLOGYM_ASSIGN(in, MakeGetTupleElement(body_param, index));
    HLOGYM_RETURN_IF_ERROR(targets[j]->ReplaceAllUsesWith(in));
    HLOGYM_ASSIGN(through, MakeGetTupleElement(body_param, index));
    new_gtes.push_back(through);
  }
  std::vector<Instruction*> root_operands = body->root_instruction()->operands();
  root_operands.insert(root_operands.end(), new_gtes.begin(), new_gtes.end());
  Instruction* new_root = MakeTuple(body, root_operands);
  new_root->set_shape(new_shape);
  body->set_root_instruction(new_root);
  HLOGYM_RETURN_IF_ERROR(RemoveDeadBodyInstructions(body, effects));
  HLOGYM_RETURN_IF_ERROR(ReplaceWithWiderLoop(module, while_op, outside, new_shape));
  if (cloned) module.SortComputationsCalleesFirst();
  return absl::OkStatus();
}

// Hoists the loop-invariant instructions of one while loop's body.
absl::StatusOr<bool> TryHoist(Module& module, Instruction* while_op, SideEffectCache& effects) {
  const Computation* condition = while_op->called_computations()[0];
  const Computation* body = while_op->called_computations()[1];
  if (!while_op->shape().IsTuple() || body == condition || body->num_parameters() != 1 ||
      condition->num_parameters() != 1 || while_op->HasControlEdges() ||
      body->root_instruction()->opcode() != Opcode::kTuple) {
    return false;
  }
  // Nothing is saved by hoisting out of a loop that runs at most once.
  if (std::optional<int64_t> bound = ComputeWhileLoopTripCountUpperBound(while_op);
      bound && *bound <= 1) {
    return false;
  }
  HLOGYM_ASSIGN(hoisting, CopyInvariantsOut(module, while_op, effects));
  if (hoisting.hoisted.empty()) return false;
  HLOGYM_RETURN_IF_ERROR(MakeHoistedValuesLiveIn(module, while_op, hoisting, effects));
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
  if (changed) {
    // As XLA's pass ends: the replaced loops' leftovers go, and the
    // get-tuple-elements of the wider loops' tuples fold.
    HLOGYM_RETURN_IF_ERROR(HloDce().Run(module).status());
    HLOGYM_RETURN_IF_ERROR(TupleSimplifier().Run(module).status());
  }
  run.Complete();
  return changed;
}

bool WhileLoopInvariantCodeMotion::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile});
}

}  // namespace hlogym
