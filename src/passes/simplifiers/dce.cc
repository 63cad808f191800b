#include "passes/simplifiers/dce.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsRemovable(const Instruction* instruction, SideEffectCache& effects) {
  if (!instruction->users().empty() || instruction->IsRoot()) return false;
  if (instruction->opcode() == Opcode::kParameter) return false;
  if (!instruction->control_predecessors().empty() || !instruction->control_successors().empty()) {
    return false;
  }
  if (instruction->opcode() == Opcode::kCustomCall &&
      instruction->attrs().custom_call_target == "Sharding" && instruction->operand_count() > 0) {
    const Instruction* operand = instruction->operand(0);
    if (operand->IsRoot() || operand->opcode() == Opcode::kParameter ||
        operand->user_count() != 1) {
      return false;
    }
  }
  return !effects.HasSideEffect(instruction);
}

// The fusion instruction of every fused computation whose root is a tuple and
// that exactly one fusion calls (XLA's fusion computations have one caller).
absl::flat_hash_map<const Computation*, Instruction*> TupleFusions(const Module& module) {
  absl::flat_hash_map<const Computation*, Instruction*> fusions;
  absl::flat_hash_map<const Computation*, int> calls;
  for (const auto& computation : module.computations()) {
    if (computation->opcode_count(Opcode::kFusion) == 0) continue;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kFusion) continue;
      const Computation* fused = instruction->to_apply();
      if (fused == nullptr || fused->root_instruction() == nullptr ||
          fused->root_instruction()->opcode() != Opcode::kTuple) {
        continue;
      }
      ++calls[fused];
      fusions[fused] = instruction.get();
    }
  }
  for (const auto& [fused, count] : calls) {
    if (count > 1) fusions.erase(fused);
  }
  return fusions;
}

// XLA's removal of the unused outputs of a multi-output fusion: when every
// user of `fusion` is a get-tuple-element, the outputs none reads (and whose
// value has no side effect) leave the fused root tuple and the fusion's shape,
// the get-tuple-elements are renumbered, and a single output left is the
// fusion's whole result. Runs after the fusion's caller has lost its dead
// get-tuple-elements; the dropped operands of the old root die with it.
absl::StatusOr<bool> RemoveUnusedFusionOutputs(Instruction* fusion, Computation& fused,
                                               SideEffectCache& effects) {
  Instruction* root = fused.root_instruction();
  if (root->attrs().FindRaw("sharding") != nullptr ||
      fusion->attrs().FindRaw("output_to_operand_aliasing") != nullptr ||
      fusion->HasControlEdges() || fusion->attrs().fusion_kind == FusionKind::kCustom ||
      fusion->IsRoot() || fusion->users().empty()) {
    return false;
  }
  std::set<int64_t> used;  // ordered: the new tuple keeps the old order
  for (const Instruction* user : fusion->users()) {
    // (a get-tuple-element with control edges is left alone rather than its
    // edges relayed; a dead one is the caller's dce's to remove)
    if (user->opcode() != Opcode::kGetTupleElement || user->HasControlEdges() ||
        (user->users().empty() && !user->IsRoot())) {
      return false;
    }
    used.insert(user->attrs().tuple_index);
  }
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    if (effects.HasSideEffect(root->operand(i))) used.insert(i);
  }
  if (static_cast<int64_t>(used.size()) == root->operand_count()) return false;

  std::vector<Shape> kept_shapes;
  std::vector<Instruction*> kept_outputs;
  for (int64_t i : used) {
    kept_shapes.push_back(fusion->shape().tuple_shapes(i));
    kept_outputs.push_back(root->operand(i));
  }
  if (kept_outputs.size() == 1) {
    fusion->set_shape(kept_shapes.front());
    const std::vector<Instruction*> users = fusion->users();  // replacing edits the list
    for (Instruction* user : users) {
      HLOGYM_RETURN_IF_ERROR(user->parent()->ReplaceInstruction(user, fusion));
    }
    fused.set_root_instruction(kept_outputs.front());
  } else {
    fusion->set_shape(Shape::Tuple(std::move(kept_shapes)));
    for (Instruction* user : fusion->users()) {
      const int64_t old_index = user->attrs().tuple_index;
      user->mutable_attrs().tuple_index = std::distance(used.begin(), used.find(old_index));
    }
    fused.set_root_instruction(MakeTuple(&fused, kept_outputs));
  }
  HLOGYM_RETURN_IF_ERROR(fused.RemoveInstructionAndUnusedOperands(root));
  return true;
}

}  // namespace

absl::StatusOr<bool> HloDce::Run(Module& module) {
  // Its last run removed everything dead; only what changed since can have died (a computation
  // becomes unreachable when an instruction that called it changes).
  TrackedRun run(module, std::string(name()));
  if (!run.MustVisitModule()) return false;
  bool changed = false;
  SideEffectCache effects;
  std::vector<Computation*> order = module.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());  // callers first, as XLA visits them
  const absl::flat_hash_map<const Computation*, Instruction*> tuple_fusions = TupleFusions(module);
  for (Computation* computation : order) {
    if (auto it = tuple_fusions.find(computation);
        it != tuple_fusions.end() &&
        (run.MustVisit(*computation) || run.MustVisit(*it->second->parent()))) {
      HLOGYM_ASSIGN(pruned, RemoveUnusedFusionOutputs(it->second, *computation, effects));
      changed |= pruned;
    }
    if (!run.MustVisit(*computation)) continue;
    // Cheap exit: nothing dead.
    bool any_dead = false;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->users().empty() && instruction.get() != computation->root_instruction() &&
          instruction->opcode() != Opcode::kParameter) {
        any_dead = true;
        break;
      }
    }
    if (!any_dead) continue;
    std::vector<Instruction*> post_order = computation->MakeInstructionPostOrder();
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      Instruction* instruction = *it;
      if (!IsRemovable(instruction, effects)) continue;
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(instruction));
      changed = true;
    }
  }
  HLOGYM_ASSIGN(removed, RemoveUnreachableComputations(module));
  run.Complete();
  return changed || removed;
}

}  // namespace hlogym
