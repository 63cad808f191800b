#include "passes/while_loop/while_loop_simplifier.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/simplifiers/dce.h"
#include "passes/while_loop/while_loop_analysis.h"
#include "passes/while_loop/while_util.h"

namespace hlogym {
namespace {

Computation* Condition(const Instruction* while_op) { return while_op->called_computations()[0]; }
Computation* Body(const Instruction* while_op) { return while_op->called_computations()[1]; }

bool ComputationHasControlEdges(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->HasControlEdges()) return true;
  }
  return false;
}

// A side effect as XLA's HloInstruction::HasSideEffect sees one: hlogym's
// Instruction::HasSideEffect also counts optimization barriers, add-dependency
// and after-all (to keep other passes from dropping them), which XLA does not.
bool HasXlaSideEffect(const Instruction* instruction) {
  switch (instruction->opcode()) {
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
      break;
    default:
      if (instruction->HasSideEffect()) return true;
  }
  for (const Computation* callee : instruction->called_computations()) {
    if (callee == nullptr) continue;
    for (const auto& inner : callee->instructions()) {
      if (HasXlaSideEffect(inner.get())) return true;
    }
  }
  return false;
}

// Instructions reachable through operands from the root and, when
// `keep_side_effects`, from every instruction with a side effect (which
// stay even when nothing reads them).
absl::flat_hash_set<const Instruction*> ReachableFromRoot(const Computation& computation,
                                                          bool keep_side_effects = false) {
  absl::flat_hash_set<const Instruction*> live = {computation.root_instruction()};
  std::vector<const Instruction*> worklist = {computation.root_instruction()};
  if (keep_side_effects) {
    for (const auto& instruction : computation.instructions()) {
      if (HasXlaSideEffect(instruction.get()) && live.insert(instruction.get()).second) {
        worklist.push_back(instruction.get());
      }
    }
  }
  while (!worklist.empty()) {
    const Instruction* instruction = worklist.back();
    worklist.pop_back();
    for (const Instruction* operand : instruction->operands()) {
      if (live.insert(operand).second) worklist.push_back(operand);
    }
  }
  return live;
}

// Removes instructions (not parameters) that reach neither the root nor an
// instruction with a side effect. Only for computations without control edges.
absl::Status RemoveUnreachable(Computation& computation) {
  absl::flat_hash_set<const Instruction*> live =
      ReachableFromRoot(computation, /*keep_side_effects=*/true);
  std::vector<Instruction*> order = computation.MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* instruction = *it;
    if (live.contains(instruction) || instruction->opcode() == Opcode::kParameter) continue;
    HLOGYM_RETURN_IF_ERROR(computation.RemoveInstruction(instruction));
  }
  return absl::OkStatus();
}

// The loop-state element indices read by live instructions of `computation`
// through get-tuple-element of its parameter; nullopt when the parameter has
// a live non-get-tuple-element user.
std::optional<std::vector<int64_t>> LiveParamIndices(
    const Computation& computation, const absl::flat_hash_set<const Instruction*>& live) {
  std::vector<int64_t> indices;
  const Instruction* param = computation.parameter_instruction(0);
  for (const Instruction* user : param->users()) {
    if (!live.contains(user)) continue;
    if (user->opcode() != Opcode::kGetTupleElement) return std::nullopt;
    indices.push_back(user->attrs().tuple_index);
  }
  if (param->IsRoot()) return std::nullopt;
  return indices;
}

bool LoopHasSideEffect(const Instruction* while_op) {
  return ComputationHasSideEffect(*Condition(while_op)) ||
         ComputationHasSideEffect(*Body(while_op));
}

// Replaces uses of loop-invariant elements whose init is a constant by the
// constant, in the body, the condition and the loop's users.
absl::StatusOr<bool> PropagateConstantElements(Module& module, Instruction* while_op) {
  const Instruction* init = while_op->operand(0);
  Computation* body = Body(while_op);
  Computation* condition = Condition(while_op);
  if (init->opcode() != Opcode::kTuple || body == condition || module.CallerCount(body) != 1 ||
      module.CallerCount(condition) != 1) {
    return false;
  }
  bool changed = false;
  for (Instruction* gte : GetInvariantGtesForWhileBody(*body)) {
    int64_t index = gte->attrs().tuple_index;
    Instruction* constant = init->operand(index);
    // Scalars only, as in XLA: copies of array constants would cost memory.
    if (constant->opcode() != Opcode::kConstant || !constant->shape().IsScalar()) continue;
    auto copy_into = [&](Computation* computation) {
      return computation->AddInstruction(
          constant->CloneWithNewOperands({}, module.UniqueName(constant->name())));
    };
    // Body and condition: every get-tuple-element of the element (the
    // frontend often reads one several times), the body root's pass-through
    // included, reads a copy of its own, as in XLA, which copies the
    // constant even for a read nobody uses (dce removes it).
    for (Computation* computation : {condition, body}) {
      std::vector<Instruction*> reads;
      for (Instruction* user : computation->parameter_instruction(0)->users()) {
        if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == index) {
          reads.push_back(user);
        }
      }
      for (Instruction* read : reads) {
        HLOGYM_RETURN_IF_ERROR(read->ReplaceAllUsesWith(copy_into(computation)));
        changed = true;
      }
    }
    // The loop's result.
    std::vector<Instruction*> outside;
    for (Instruction* user : while_op->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index == index &&
          user->control_successors().empty() && user->control_predecessors().empty()) {
        outside.push_back(user);
      }
    }
    for (Instruction* user : outside) {
      HLOGYM_RETURN_IF_ERROR(user->ReplaceAllUsesWith(constant));
      if (!user->IsRoot()) {
        HLOGYM_RETURN_IF_ERROR(user->parent()->RemoveInstruction(user));
      }
      changed = true;
    }
  }
  return changed;
}

// Trip count 0 or 1, or no users: the loop goes. True when removed.
absl::StatusOr<bool> TryRemoveWhileLoop(Module& /*module*/, Instruction* while_op) {
  if (while_op->HasControlEdges() || LoopHasSideEffect(while_op)) return false;
  Computation* parent = while_op->parent();
  if (while_op->user_count() == 0 && !while_op->IsRoot()) {
    HLOGYM_RETURN_IF_ERROR(parent->RemoveInstructionAndUnusedOperands(while_op));
    return true;
  }
  std::optional<int64_t> trip_count = ComputeWhileLoopTripCount(while_op);
  if (!trip_count || *trip_count > 1) return false;
  Instruction* replacement = while_op->operand(0);
  if (*trip_count == 1) {
    HLOGYM_ASSIGN(root, InlineComputation(parent, *Body(while_op), {while_op->operand(0)}));
    replacement = root;
  }
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(while_op, replacement));
  return true;
}

// The loop-state elements that stay, by XLA's two rules for dead elements:
// 1. an element nothing reads after the loop goes when its value reaches no
//    instruction with a side effect, not the condition, and no other
//    element's next value (its own does not count);
// 2. a connected group of elements goes (connected through the body's and
//    condition's instructions, each element's read joined to its next value)
//    when every member is either unread after the loop or passed through
//    unchanged, and none reaches a side effect or the condition.
// Neither rule looks at what the other removes, so an element that only
// feeds a dead one stays for the next run, as in XLA. nullopt when a user is
// not a get-tuple-element or the whole state is read at once.
std::optional<std::vector<bool>> NeededStateElements(const Instruction* while_op,
                                                     const Computation* body,
                                                     const Computation* condition) {
  const int64_t n = while_op->shape().tuple_shapes_size();
  std::vector<bool> after_loop(n, false);
  for (const Instruction* user : while_op->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return std::nullopt;
    after_loop[user->attrs().tuple_index] = true;
  }
  // Elements that reach the condition or an instruction with a side effect.
  std::vector<bool> sink(n, false);
  auto cond_indices = LiveParamIndices(*condition, ReachableFromRoot(*condition));
  if (!cond_indices) return std::nullopt;
  for (int64_t i : *cond_indices) sink[i] = true;
  // As in XLA (which has no loop-wide side-effect bail), the elements an
  // instruction with a side effect reads stay; the instruction itself stays
  // too. Optimization barriers (remat) are no side effect to XLA.
  for (const Computation* computation :
       {static_cast<const Computation*>(body), static_cast<const Computation*>(condition)}) {
    const Instruction* param = computation->parameter_instruction(0);
    absl::flat_hash_set<const Instruction*> seen;
    std::vector<const Instruction*> worklist;
    for (const auto& instruction : computation->instructions()) {
      if (HasXlaSideEffect(instruction.get()) && seen.insert(instruction.get()).second) {
        worklist.push_back(instruction.get());
      }
    }
    while (!worklist.empty()) {
      const Instruction* instruction = worklist.back();
      worklist.pop_back();
      if (instruction == param) return std::nullopt;  // the whole state is read
      if (instruction->opcode() == Opcode::kGetTupleElement && instruction->operand(0) == param) {
        sink[instruction->attrs().tuple_index] = true;
        continue;
      }
      for (const Instruction* operand : instruction->operands()) {
        if (seen.insert(operand).second) worklist.push_back(operand);
      }
    }
  }
  // deps[j]: the elements the body's root operand j reads.
  const Instruction* root = body->root_instruction();
  const Instruction* body_param = body->parameter_instruction(0);
  const Instruction* cond_param = condition->parameter_instruction(0);
  std::vector<std::vector<int64_t>> deps(n);
  for (int64_t j = 0; j < n; ++j) {
    absl::flat_hash_set<const Instruction*> seen = {root->operand(j)};
    std::vector<const Instruction*> worklist = {root->operand(j)};
    while (!worklist.empty()) {
      const Instruction* instruction = worklist.back();
      worklist.pop_back();
      if (instruction == body_param) return std::nullopt;  // the whole state is read
      if (instruction->opcode() == Opcode::kGetTupleElement &&
          instruction->operand(0) == body_param) {
        deps[j].push_back(instruction->attrs().tuple_index);
        continue;
      }
      for (const Instruction* operand : instruction->operands()) {
        if (seen.insert(operand).second) worklist.push_back(operand);
      }
    }
  }
  // XLA tells elements apart only when every read of the state is a
  // get-tuple-element.
  for (const Instruction* param : {body_param, cond_param}) {
    for (const Instruction* user : param->users()) {
      if (user != root && user->opcode() != Opcode::kGetTupleElement) return std::nullopt;
    }
  }
  auto passed_through = [&](int64_t i) {
    const Instruction* next = root->operand(i);
    return next->opcode() == Opcode::kGetTupleElement && next->operand(0) == body_param &&
           next->attrs().tuple_index == i;
  };
  std::vector<bool> candidate(n), removed(n, false);
  for (int64_t i = 0; i < n; ++i) candidate[i] = !after_loop[i] || passed_through(i);

  // Rule 1.
  std::vector<bool> affects_others(n, false);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i : deps[j]) {
      if (!(candidate[j] && i == j)) affects_others[i] = true;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (!after_loop[i] && !affects_others[i] && !sink[i]) removed[i] = true;
  }

  // Rule 2: groups of connected instructions (a union-find over both
  // computations; the parameters and the body root join nothing).
  absl::flat_hash_map<const Instruction*, const Instruction*> set_parent;
  auto find = [&](const Instruction* x) {
    const Instruction* root = x;
    for (auto it = set_parent.find(root); it != set_parent.end() && it->second != root;
         it = set_parent.find(root)) {
      root = it->second;
    }
    // Path compression: a long loop body otherwise walks its chains again
    // and again (MJX's physics steps spent most of their time here).
    while (x != root) {
      auto it = set_parent.find(x);
      x = std::exchange(it->second, root);
    }
    return root;
  };
  auto merge = [&](const Instruction* a, const Instruction* b) { set_parent[find(a)] = find(b); };
  auto tracked = [&](const Instruction* x) {
    return x != body_param && x != cond_param && x != root;
  };
  for (const Computation* computation : {body, condition}) {
    const Instruction* param = computation->parameter_instruction(0);
    for (const auto& owned : computation->instructions()) {
      const Instruction* instruction = owned.get();
      if (!tracked(instruction)) continue;
      if (instruction->opcode() == Opcode::kGetTupleElement && instruction->operand(0) == param) {
        const Instruction* next = root->operand(instruction->attrs().tuple_index);
        if (next != instruction) merge(next, instruction);
        continue;
      }
      for (const Instruction* operand : instruction->operands()) {
        if (tracked(operand)) merge(operand, instruction);
      }
    }
  }
  absl::flat_hash_map<const Instruction*, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < n; ++i) groups[find(root->operand(i))].push_back(i);
  for (const Computation* computation : {body, condition}) {
    for (const Instruction* read : computation->parameter_instruction(0)->users()) {
      groups[find(read)].push_back(read->attrs().tuple_index);
    }
  }
  for (const auto& [representative, members] : groups) {
    if (std::none_of(members.begin(), members.end(),
                     [&](int64_t i) { return !candidate[i] || sink[i]; })) {
      for (int64_t i : members) removed[i] = true;
    }
  }
  std::vector<bool> used(n);
  for (int64_t i = 0; i < n; ++i) used[i] = !removed[i];
  return used;
}

// Removes loop-state elements nothing needs. True when the loop changed.
absl::StatusOr<bool> TryRemoveDeadElements(Module& module, Instruction* while_op) {
  Computation* parent = while_op->parent();
  Computation* body = Body(while_op);
  Computation* condition = Condition(while_op);
  const Shape& shape = while_op->shape();
  if (!shape.IsTuple() || while_op->HasControlEdges() || while_op->IsRoot() || body == condition ||
      body->num_parameters() != 1 || condition->num_parameters() != 1 ||
      body->root_instruction()->opcode() != Opcode::kTuple || ComputationHasControlEdges(*body) ||
      ComputationHasControlEdges(*condition)) {
    return false;
  }
  const int64_t n = shape.tuple_shapes_size();
  const std::optional<std::vector<bool>> needed = NeededStateElements(while_op, body, condition);
  if (!needed) return false;
  const std::vector<bool>& used = *needed;
  std::vector<int64_t> live;
  std::vector<int64_t> new_index(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    if (used[i]) {
      new_index[i] = static_cast<int64_t>(live.size());
      live.push_back(i);
    }
  }
  if (static_cast<int64_t>(live.size()) == n || live.empty()) return false;

  std::vector<Shape> element_shapes;
  for (int64_t i : live) element_shapes.push_back(shape.tuple_shapes(i));
  Shape new_shape = Shape::Tuple(element_shapes);
  if (shape.has_layout()) new_shape.set_layout(*shape.layout());

  // Body and condition: edit copies when someone else calls them.
  const bool cloned = UnshareLoopComputations(module, while_op);
  body = while_op->called_computations()[1];
  condition = while_op->called_computations()[0];
  Instruction* old_root = body->root_instruction();
  std::vector<Instruction*> root_operands;
  for (int64_t i : live) root_operands.push_back(old_root->operand(i));
  Instruction* new_root = MakeTuple(body, root_operands);
  new_root->set_shape(new_shape);
  body->set_root_instruction(new_root);
  for (Computation* computation : {body, condition}) {
    HLOGYM_RETURN_IF_ERROR(RemoveUnreachable(*computation));
    Instruction* param = computation->parameter_instruction(0);
    param->set_shape(new_shape);
    for (Instruction* user : param->users()) {
      int64_t index = user->attrs().tuple_index;
      if (user->opcode() != Opcode::kGetTupleElement || new_index[index] < 0) {
        return absl::InternalError("simplify-while-loops: dead element still read in " +
                                   computation->name());
      }
      user->mutable_attrs().tuple_index = new_index[index];
    }
  }

  // The narrower loop.
  Instruction* init = while_op->operand(0);
  std::vector<Instruction*> init_elements;
  for (int64_t i : live) {
    HLOGYM_ASSIGN(element, InitElement(init, i));
    init_elements.push_back(element);
  }
  Instruction* new_init = MakeTuple(parent, init_elements);
  new_init->set_shape(new_shape);
  auto replacement =
      while_op->CloneWithNewOperands({new_init}, module.UniqueName(while_op->name()));
  replacement->set_shape(new_shape);
  replacement->mutable_attrs().EraseRaw("backend_config");
  Instruction* new_while = parent->AddInstruction(std::move(replacement));
  // Like XLA, the old loop's users read a full-width tuple: live elements
  // from the new loop, dead ones from the old init value. tuple-simplifier
  // and dce clean it up later.
  std::vector<Instruction*> full;
  for (int64_t i = 0; i < n; ++i) {
    HLOGYM_ASSIGN(gte, new_index[i] >= 0 ? MakeGetTupleElement(new_while, new_index[i])
                                         : MakeGetTupleElement(init, i));
    full.push_back(gte);
  }
  Instruction* full_tuple = MakeTuple(parent, full);
  full_tuple->set_shape(shape);
  HLOGYM_RETURN_IF_ERROR(while_op->ReplaceAllUsesWith(full_tuple));
  HLOGYM_RETURN_IF_ERROR(parent->RemoveInstructionAndUnusedOperands(while_op));
  if (cloned) module.SortComputationsCalleesFirst();
  return true;
}

// The leaves of a nested tuple shape, depth first, as index paths.
void CollectLeafPaths(const Shape& shape, std::vector<int64_t>& prefix,
                      std::vector<std::vector<int64_t>>& paths) {
  if (!shape.IsTuple()) {
    paths.push_back(prefix);
    return;
  }
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    prefix.push_back(i);
    CollectLeafPaths(shape.tuple_shapes(i), prefix, paths);
    prefix.pop_back();
  }
}

// The leaves of `value` at `paths`: a chain of get-tuple-elements each (one
// for a path of length one, the elements of a flat tuple).
absl::StatusOr<std::vector<Instruction*>> ExtractLeaves(
    Instruction* value, const std::vector<std::vector<int64_t>>& paths) {
  std::vector<Instruction*> leaves;
  leaves.reserve(paths.size());
  for (const std::vector<int64_t>& path : paths) {
    Instruction* leaf = value;
    for (int64_t index : path) {
      HLOGYM_ASSIGN(gte, MakeGetTupleElement(leaf, index));
      leaf = gte;
    }
    leaves.push_back(leaf);
  }
  return leaves;
}

// A value of nested `shape` rebuilt from its leaves (read from `leaves`
// starting at `next`): one tuple per level.
Instruction* BuildNested(Computation* computation, const Shape& shape,
                         const std::vector<Instruction*>& leaves, size_t& next) {
  if (!shape.IsTuple()) return leaves[next++];
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
    elements.push_back(BuildNested(computation, shape.tuple_shapes(i), leaves, next));
  }
  Instruction* tuple = MakeTuple(computation, elements);
  tuple->set_shape(shape);
  return tuple;
}

// Body and condition called by this loop alone, and both distinct: XLA leaves
// other loops alone.
bool OwnsComputations(const Module& module, const Instruction* while_op) {
  return Body(while_op) != Condition(while_op) && module.CallerCount(Body(while_op)) == 1 &&
         module.CallerCount(Condition(while_op)) == 1;
}

// A loop whose state, init and body root are tuples, with a body and
// condition of its own: what the element-wise rewrites below edit.
bool IsOwnedTupleLoop(const Module& module, const Instruction* while_op) {
  return while_op->shape().IsTuple() && while_op->operand(0)->opcode() == Opcode::kTuple &&
         Body(while_op)->root_instruction()->opcode() == Opcode::kTuple &&
         OwnsComputations(module, while_op);
}

// TryFlattenNestedTuples: a loop state with tuples inside becomes the flat
// tuple of its leaves. The body and condition read the flat parameter through
// a rebuilt nested value, the body root is taken apart leaf by leaf, and the
// loop's users read a rebuilt nested result; tuple-simplifier then folds the
// get-tuple-element(tuple) pairs, which unlocks the element-wise rewrites.
absl::StatusOr<bool> TryFlattenNestedTuples(Module& module, Instruction* while_op) {
  const Shape shape = while_op->shape();
  if (!IsOwnedTupleLoop(module, while_op) || while_op->HasControlEdges()) return false;
  bool nested = false;
  for (const Shape& element : shape.tuple_shapes()) nested |= element.IsTuple();
  if (!nested) return false;
  std::vector<std::vector<int64_t>> paths;
  std::vector<int64_t> prefix;
  CollectLeafPaths(shape, prefix, paths);
  std::vector<Shape> leaf_shapes;
  std::vector<std::vector<int64_t>> flat_paths;  // the elements of the flat state
  for (const auto& path : paths) {
    leaf_shapes.push_back(shape.Subshape(path));
    flat_paths.push_back({static_cast<int64_t>(flat_paths.size())});
  }
  Shape flat = Shape::Tuple(leaf_shapes);
  if (shape.has_layout()) flat.set_layout(*shape.layout());

  for (Computation* computation : {Condition(while_op), Body(while_op)}) {
    Instruction* param = computation->parameter_instruction(0);
    std::vector<Instruction*> users(param->users().begin(), param->users().end());
    param->set_shape(flat);
    HLOGYM_ASSIGN(leaves, ExtractLeaves(param, flat_paths));
    size_t next = 0;
    Instruction* rebuilt = BuildNested(computation, shape, leaves, next);
    for (Instruction* user : users) {
      user->ReplaceUsesOfOperand(param, rebuilt);
    }
    if (computation->root_instruction() == param) computation->set_root_instruction(rebuilt);
  }
  Computation* body = Body(while_op);
  HLOGYM_ASSIGN(root_leaves, ExtractLeaves(body->root_instruction(), paths));
  Instruction* new_root = MakeTuple(body, root_leaves);
  new_root->set_shape(flat);
  body->set_root_instruction(new_root);

  Computation* parent = while_op->parent();
  HLOGYM_ASSIGN(init_leaves, ExtractLeaves(while_op->operand(0), paths));
  Instruction* new_init = MakeTuple(parent, init_leaves);
  new_init->set_shape(flat);
  auto replacement =
      while_op->CloneWithNewOperands({new_init}, module.UniqueName(while_op->name()));
  replacement->set_shape(flat);
  Instruction* new_while = parent->AddInstruction(std::move(replacement));
  HLOGYM_ASSIGN(result_leaves, ExtractLeaves(new_while, flat_paths));
  size_t next = 0;
  Instruction* result = BuildNested(parent, shape, result_leaves, next);
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(while_op, result));
  return true;
}

// TryRemoveRepeatedWhileTupleIndices: elements with the same init
// instruction hold the same value in every iteration where the body passes
// each through, or writes the same update at the same indices into each (a
// dynamic-update-slice of the element's own read: two stacked copies of one
// scan output). The body and condition read the lowest-indexed one of them,
// and the loop's users read the init value (passed through) or the
// survivor's result (updated); the others are then dead and dead-element
// removal takes them out.
absl::StatusOr<bool> TryRemoveRepeatedElements(Module& module, Instruction* while_op) {
  Computation* body = Body(while_op);
  Computation* condition = Condition(while_op);
  Instruction* init = while_op->operand(0);
  Instruction* root = body->root_instruction();
  if (!IsOwnedTupleLoop(module, while_op) || while_op->HasControlEdges() ||
      LoopHasSideEffect(while_op)) {
    return false;
  }
  for (const Computation* computation : {body, condition}) {
    for (const Instruction* user : computation->parameter_instruction(0)->users()) {
      if (user->opcode() != Opcode::kGetTupleElement) return false;
    }
  }
  const Instruction* param = body->parameter_instruction(0);
  auto reads_own_element = [&](const Instruction* value, int64_t i) {
    return value->opcode() == Opcode::kGetTupleElement && value->operand(0) == param &&
           value->attrs().tuple_index == i;
  };
  absl::flat_hash_map<const Instruction*, int64_t> first_with_init;  // passed through
  std::vector<int64_t> inserting;  // updated in place, none a repeat of an earlier one
  struct Repeat {
    int64_t index;
    int64_t survivor;
    bool updated;  // the dynamic-update-slice kind
  };
  std::vector<Repeat> repeated;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const Instruction* update = root->operand(i);
    if (reads_own_element(update, i)) {
      auto [it, inserted] = first_with_init.emplace(init->operand(i), i);
      if (!inserted) repeated.push_back({i, it->second, false});
      continue;
    }
    if (update->opcode() != Opcode::kDynamicUpdateSlice ||
        !reads_own_element(update->operand(0), i)) {
      continue;
    }
    auto same_insertion = [&](int64_t earlier) {
      const Instruction* other = root->operand(earlier);
      if (init->operand(earlier) != init->operand(i) ||
          other->operand_count() != update->operand_count()) {
        return false;
      }
      for (int64_t k = 1; k < update->operand_count(); ++k) {
        if (other->operand(k) != update->operand(k)) return false;
      }
      return true;
    };
    auto survivor = std::find_if(inserting.begin(), inserting.end(), same_insertion);
    if (survivor != inserting.end()) {
      repeated.push_back({i, *survivor, true});
    } else {
      inserting.push_back(i);
    }
  }
  if (repeated.empty()) return false;
  bool changed = false;
  for (Computation* computation : {body, condition}) {
    Instruction* p = computation->parameter_instruction(0);
    absl::flat_hash_map<int64_t, Instruction*> survivor_reads;
    for (const auto& [index, survivor, updated] : repeated) {
      std::vector<Instruction*> reads;
      for (Instruction* user : p->users()) {
        if (user->attrs().tuple_index == index && user->user_count() > 0) reads.push_back(user);
      }
      for (Instruction* read : reads) {
        Instruction*& survivor_read = survivor_reads[survivor];
        if (survivor_read == nullptr) {
          HLOGYM_ASSIGN(gte, MakeGetTupleElement(p, survivor));
          survivor_read = gte;
        }
        // The root's own pass-through stays: that is the element going dead.
        std::vector<Instruction*> users(read->users().begin(), read->users().end());
        for (Instruction* user : users) {
          for (int64_t k = 0; k < user->operand_count(); ++k) {
            if (user->operand(k) != read || (user == root && k == index)) continue;
            user->ReplaceOperandWith(k, survivor_read);
            changed = true;
          }
        }
      }
    }
  }
  std::vector<Instruction*> outside;
  for (Instruction* user : while_op->users()) outside.push_back(user);
  for (Instruction* user : outside) {
    if (user->opcode() != Opcode::kGetTupleElement || user->HasControlEdges()) continue;
    for (const auto& [index, survivor, updated] : repeated) {
      if (user->attrs().tuple_index != index) continue;
      Instruction* value = init->operand(index);
      if (updated) {
        HLOGYM_ASSIGN(result, MakeGetTupleElement(while_op, survivor));
        value = result;
      }
      absl::Status status = user->ReplaceAllUsesWith(value);
      if (status.ok() && !user->IsRoot()) status = user->parent()->RemoveInstruction(user);
      if (!status.ok()) return status;
      changed = true;
    }
  }
  return changed;
}

// The constant step when `update` is add(get-tuple-element(param, index),
// scalar constant) in either order, of element type `type`; else nullptr.
Instruction* InductionStep(const Instruction* update, const Instruction* param, int64_t index,
                           PrimitiveType type) {
  if (update->opcode() != Opcode::kAdd || update->shape().element_type() != type ||
      !update->shape().IsScalar()) {
    return nullptr;
  }
  for (int64_t side = 0; side < 2; ++side) {
    const Instruction* gte = update->operand(side);
    Instruction* step = update->operand(1 - side);
    if (gte->opcode() == Opcode::kGetTupleElement && gte->operand(0) == param &&
        gte->attrs().tuple_index == index && step->opcode() == Opcode::kConstant &&
        step->shape().IsScalar()) {
      return step;
    }
  }
  return nullptr;
}

// TryMergeInductionVariables for one integer type, built as XLA builds it. The
// trip counter is the first element that starts at constant 0 and adds 1; an
// induction variable is any other element that adds a scalar constant each
// iteration. With two or more of them in all (a counter is appended to the
// state where there is none), the variables stop changing and are read as
// init + counter * step: the body and condition read the state through a tuple
// in that old form, the body's new root passes the variables through and reads
// every other element from the old root (which stays, unrooted), and the
// loop's users read the old form of the new loop. Algsimp and
// tuple-simplifier fold the get-tuple-element(tuple) pairs, and later runs'
// constant propagation folds the variables' init values in. The loop keeps
// its instruction and computations (XLA makes new ones), which get new
// creation indices as XLA's new ones would. Returns the loop when it changed
// (a new instruction where the state grew), else null. (XLA also takes
// variables of effective-scalar shapes such as s32[1]; hlogym only scalars.)
absl::StatusOr<Instruction*> TryMergeInductionVariables(Module& module, Instruction* while_op,
                                                        PrimitiveType type) {
  if (!IsOwnedTupleLoop(module, while_op) || while_op->HasControlEdges()) return nullptr;
  Computation* body = Body(while_op);
  Computation* condition = Condition(while_op);
  Instruction* init = while_op->operand(0);
  Instruction* old_root = body->root_instruction();
  std::optional<int64_t> counter;
  absl::flat_hash_map<int64_t, Instruction*> steps;  // variable index -> its step
  for (int64_t i = 0; i < old_root->operand_count(); ++i) {
    Instruction* step =
        InductionStep(old_root->operand(i), body->parameter_instruction(0), i, type);
    if (step == nullptr) continue;
    const Instruction* start = init->operand(i);
    if (!counter && step->literal().IsAll(1) && start->opcode() == Opcode::kConstant &&
        start->literal().IsAll(0)) {
      counter = i;
    } else {
      steps.emplace(i, step);
    }
  }
  if (steps.size() + (counter ? 1 : 0) < 2) return nullptr;

  const Shape old_shape = while_op->shape();
  const int64_t size = old_shape.tuple_shapes_size();
  Shape new_shape = old_shape;
  const bool added_counter = !counter;
  // A new counter's shape (and layout) is a variable's.
  const Shape& scalar = old_shape.tuple_shapes(steps.begin()->first);
  if (added_counter) {
    counter = size;
    std::vector<Shape> elements = old_shape.tuple_shapes();
    elements.push_back(scalar);
    new_shape = Shape::Tuple(std::move(elements));
    if (old_shape.has_layout()) new_shape.set_layout(*old_shape.layout());
  }
  // `state` (of the new shape) as a tuple of the old shape, each variable
  // reified as init + counter * step.
  auto old_form = [&](Instruction* state) -> absl::StatusOr<Instruction*> {
    Computation* computation = state->parent();
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < size; ++i) {
      HLOGYM_ASSIGN(element, MakeGetTupleElement(state, i));
      if (auto step = steps.find(i); step != steps.end()) {
        HLOGYM_ASSIGN(trips, MakeGetTupleElement(state, *counter));
        Instruction* local_step = computation->AddInstruction(
            step->second->CloneWithNewOperands({}, module.UniqueName(step->second->name())));
        HLOGYM_ASSIGN(scaled, MakeBinary(Opcode::kMultiply, trips, local_step));
        HLOGYM_ASSIGN(value, MakeBinary(Opcode::kAdd, element, scaled));
        element = value;
      }
      elements.push_back(element);
    }
    Instruction* tuple = MakeTuple(computation, elements);
    tuple->set_shape(old_shape);
    return tuple;
  };

  for (Computation* computation : {condition, body}) {
    Instruction* param = computation->parameter_instruction(0);
    std::vector<Instruction*> users(param->users().begin(), param->users().end());
    param->set_shape(new_shape);
    HLOGYM_ASSIGN(reified, old_form(param));
    for (Instruction* user : users) {
      user->ReplaceUsesOfOperand(param, reified);
    }
  }
  Instruction* body_param = body->parameter_instruction(0);
  std::vector<Instruction*> next;
  for (int64_t i = 0; i < size; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(steps.contains(i) ? body_param : old_root, i));
    next.push_back(element);
  }
  if (added_counter) {
    HLOGYM_ASSIGN(trips, MakeGetTupleElement(body_param, *counter));
    HLOGYM_ASSIGN(incremented, MakeBinary(Opcode::kAdd, trips,
                                          MakeScalarConstant(body, type, 1, scalar.has_layout())));
    next.push_back(incremented);
  }
  Instruction* new_root = MakeTuple(body, next);
  new_root->set_shape(new_shape);
  body->set_root_instruction(new_root);

  Computation* parent = while_op->parent();
  Instruction* new_init = init;
  if (added_counter) {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < size; ++i) {
      HLOGYM_ASSIGN(element, MakeGetTupleElement(init, i));
      elements.push_back(element);
    }
    elements.push_back(MakeScalarConstant(parent, type, 0, scalar.has_layout()));
    new_init = MakeTuple(parent, elements);
    new_init->set_shape(new_shape);
  }
  auto replacement =
      while_op->CloneWithNewOperands({new_init}, module.UniqueName(while_op->name()));
  replacement->set_shape(new_shape);
  Instruction* new_while = parent->AddInstruction(std::move(replacement));
  HLOGYM_ASSIGN(result, old_form(new_while));
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(while_op, result));
  for (Computation* computation : {condition, body}) {
    HLOGYM_RETURN_IF_ERROR(RemoveUnreachable(*computation));
    module.NoteRecreated(computation);
  }
  return new_while;
}

absl::StatusOr<bool> TryMergeInductionVariablesOfEveryType(Module& module, Instruction* while_op) {
  bool changed = false;
  for (PrimitiveType type : {PrimitiveType::kS8, PrimitiveType::kU8, PrimitiveType::kS32,
                             PrimitiveType::kU32, PrimitiveType::kS64, PrimitiveType::kU64}) {
    HLOGYM_ASSIGN(merged, TryMergeInductionVariables(module, while_op, type));
    if (merged == nullptr) continue;
    while_op = merged;
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> WhileLoopSimplifier::Run(Module& module) {
  // XLA gathers the loops up front, walking its list of computations in the
  // order they joined the module (creation order), and a structural rewrite
  // replaces a loop with a new one whose body and condition are copies of
  // the old ones. A copy shares what the old computation calls, so each loop
  // directly inside the old body or condition then has two callers of its
  // own body and condition, and XLA leaves it for the pipeline's next run;
  // loops nested deeper have one caller still and are simplified as usual.
  std::vector<Computation*> computations;
  for (const auto& computation : module.computations()) computations.push_back(computation.get());
  std::stable_sort(computations.begin(), computations.end(),
                   [](const Computation* a, const Computation* b) {
                     return a->creation_index() < b->creation_index();
                   });
  std::vector<std::pair<Computation*, Instruction*>> while_ops;
  for (Computation* computation : computations) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kWhile &&
          instruction->called_computations().size() == 2 && instruction->operand_count() == 1) {
        while_ops.emplace_back(computation, instruction);
      }
    }
  }
  if (while_ops.empty()) return false;
  bool changed = false;
  // The rewrites in order. As in XLA, a structural one that changes the loop
  // ends its turn (the pipeline's next run continues); constant propagation
  // edits in place and lets the others follow.
  struct Step {
    absl::StatusOr<bool> (*run)(Module&, Instruction*);
    bool ends_turn;
  };
  static constexpr Step kSteps[] = {
      {TryRemoveRepeatedElements, true}, {TryFlattenNestedTuples, true},
      {TryRemoveDeadElements, true},     {PropagateConstantElements, false},
      {TryRemoveWhileLoop, true},        {TryMergeInductionVariablesOfEveryType, true},
  };
  // Bodies and conditions a rewrite replaced in XLA: loops in them wait for
  // the next run.
  absl::flat_hash_set<const Computation*> replaced;
  for (const auto& [parent, while_op] : while_ops) {
    if (replaced.contains(parent)) continue;
    const std::vector<Computation*> called = while_op->called_computations();
    for (const Step& step : kSteps) {
      HLOGYM_ASSIGN(step_changed, step.run(module, while_op));
      changed |= step_changed;
      if (step_changed && step.ends_turn) {
        replaced.insert(called.begin(), called.end());
        break;
      }
    }
  }
  // As XLA's pass ends where it changed the module: dead code goes, old loop
  // computations included.
  if (changed) HLOGYM_RETURN_IF_ERROR(HloDce().Run(module).status());
  return changed;
}

bool WhileLoopSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile});
}

}  // namespace hlogym
