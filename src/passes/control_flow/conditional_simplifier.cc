#include "passes/control_flow/conditional_simplifier.h"

#include <algorithm>
#include <functional>
#include <map>
#include <vector>

#include "absl/algorithm/container.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

bool BranchIsExpensive(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    switch (instruction->opcode()) {
      case Opcode::kBroadcast:
      case Opcode::kConcatenate:
      case Opcode::kDynamicSlice:
      case Opcode::kGetTupleElement:
      case Opcode::kReduce:
      case Opcode::kReshape:
      case Opcode::kPad:
      case Opcode::kParameter:
      case Opcode::kSlice:
      case Opcode::kTuple:
      case Opcode::kConstant:
        break;
      default:
        if (!IsElementwise(instruction->opcode())) return true;
    }
  }
  return false;
}

// A branch made only of its parameter, tuples and get-tuple-elements that returns an array
// somewhere in its result (XLA's ComputationIsEmptyWithArrayRoot).
bool BranchOnlyPassesArraysOn(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    const Opcode opcode = instruction->opcode();
    if (opcode != Opcode::kTuple && opcode != Opcode::kGetTupleElement &&
        opcode != Opcode::kParameter) {
      return false;
    }
  }
  std::function<bool(const Shape&)> holds_array = [&](const Shape& shape) {
    if (shape.IsArray()) return true;
    if (!shape.IsTuple()) return false;
    return std::any_of(shape.tuple_shapes().begin(), shape.tuple_shapes().end(), holds_array);
  };
  return holds_array(computation.root_instruction()->shape());
}

bool HoldsToken(const Shape& shape) {
  if (shape.IsToken() || shape.IsOpaque()) return true;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (HoldsToken(element)) return true;
    }
  }
  return false;
}

// select(pred, a, b) element by element through tuples.
absl::StatusOr<Instruction*> SelectValues(Instruction* pred, Instruction* on_true,
                                          Instruction* on_false) {
  const Shape& shape = on_true->shape();
  if (shape.IsTuple()) {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      HLOGYM_ASSIGN(a, MakeGetTupleElement(on_true, i));
      HLOGYM_ASSIGN(b, MakeGetTupleElement(on_false, i));
      HLOGYM_ASSIGN(element, SelectValues(pred, a, b));
      elements.push_back(element);
    }
    Instruction* tuple = MakeTuple(on_true->parent(), elements);
    tuple->set_shape(shape);
    return tuple;
  }
  Instruction* mask = pred;
  if (!shape.IsScalar()) {
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(pred, shape.dimensions(), {}));
    mask = broadcast;
  }
  return MakeSelect(mask, on_true, on_false);
}

absl::StatusOr<bool> TryRemoveConditional(Instruction* conditional) {
  const auto& branches = conditional->called_computations();
  if (branches.empty() || conditional->HasControlEdges() ||
      conditional->operand_count() != static_cast<int64_t>(branches.size()) + 1) {
    return false;
  }
  for (const Computation* branch : branches) {
    if (ComputationHasSideEffect(*branch) || branch->num_parameters() != 1) return false;
  }
  const Instruction* selector = conditional->operand(0);
  std::optional<int64_t> taken;
  if (branches.size() == 1) {
    taken = 0;
  } else if (selector->opcode() == Opcode::kConstant && selector->shape().IsScalar()) {
    if (selector->shape().element_type() == PrimitiveType::kPred) {
      taken = selector->literal().GetAsBool(0) ? 0 : 1;
    } else {
      int64_t index = selector->literal().GetAsInt64(0);
      int64_t count = static_cast<int64_t>(branches.size());
      taken = index < 0 || index >= count ? count - 1 : index;
    }
  }
  Computation* parent = conditional->parent();
  if (taken) {
    HLOGYM_ASSIGN(root,
                  InlineComputation(parent, *branches[*taken], {conditional->operand(*taken + 1)}));
    HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(conditional, root));
    return true;
  }
  for (const Computation* branch : branches) {
    // An empty branch costs less than a select: XLA keeps the conditional.
    if (BranchIsExpensive(*branch) || BranchOnlyPassesArraysOn(*branch)) return false;
  }
  return ConvertConditionalToSelect(conditional);
}

// The tuple elements `read` marks, in order, and where each element goes among them (-1 for the
// others): the renumbering of the rewrites that drop unread elements.
struct Renumbering {
  std::vector<int64_t> kept;
  std::vector<int64_t> new_index;
};
Renumbering KeepRead(const std::vector<bool>& read) {
  Renumbering r{{}, std::vector<int64_t>(read.size(), -1)};
  for (int64_t i = 0; i < static_cast<int64_t>(read.size()); ++i) {
    if (!read[i]) continue;
    r.new_index[i] = static_cast<int64_t>(r.kept.size());
    r.kept.push_back(i);
  }
  return r;
}

// Whether every user of `conditional` reads one element of its tuple result (and there is one),
// the condition of the rewrites that renumber those elements.
bool OnlyElementsAreRead(const Instruction* conditional) {
  if (conditional->user_count() == 0 || conditional->IsRoot() || !conditional->shape().IsTuple()) {
    return false;
  }
  for (const Instruction* user : conditional->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
  }
  return true;
}

// Result elements every branch computes with the same instruction are one: their readers read the
// first of them (XLA's MergeDuplicateTupleElements; the others then go unread).
bool MergeDuplicateResultElements(Instruction* conditional) {
  if (!OnlyElementsAreRead(conditional)) return false;
  const auto& branches = conditional->called_computations();
  for (const Computation* branch : branches) {
    if (branch->root_instruction()->opcode() != Opcode::kTuple) return false;
  }
  std::map<std::vector<const Instruction*>, int64_t> first_with;
  std::vector<int64_t> same_as(conditional->shape().tuple_shapes_size());
  for (int64_t i = 0; i < static_cast<int64_t>(same_as.size()); ++i) {
    std::vector<const Instruction*> sources;
    for (const Computation* branch : branches) {
      sources.push_back(branch->root_instruction()->operand(i));
    }
    same_as[i] = first_with.emplace(std::move(sources), i).first->second;
  }
  bool changed = false;
  for (Instruction* user : conditional->users()) {
    int64_t& index = user->mutable_attrs().tuple_index;
    if (same_as[index] != index) {
      index = same_as[index];
      changed = true;
    }
  }
  return changed;
}

// Result elements nothing reads go: each branch is replaced by a copy whose root is a tuple of the
// read elements (XLA's RemoveUnusedTupleElements; the old branches stay for dce, as in XLA).
absl::StatusOr<bool> RemoveUnreadResultElements(Module& module, Instruction* conditional) {
  if (!OnlyElementsAreRead(conditional)) return false;
  const Shape old_shape = conditional->shape();
  const int64_t n = old_shape.tuple_shapes_size();
  std::vector<bool> read(n, false);
  for (const Instruction* user : conditional->users()) read[user->attrs().tuple_index] = true;
  const auto [kept, new_index] = KeepRead(read);
  if (static_cast<int64_t>(kept.size()) == n) return false;
  for (const Computation* branch : conditional->called_computations()) {
    if (!branch->root_instruction()->shape().IsTuple()) return false;
  }
  std::vector<Shape> kept_shapes;
  for (int64_t i : kept) kept_shapes.push_back(old_shape.tuple_shapes(i));
  Shape new_shape = Shape::Tuple(kept_shapes);
  if (old_shape.has_layout()) new_shape.set_layout(*old_shape.layout());
  for (Computation*& branch : conditional->mutable_called_computations()) {
    Computation* copy = CloneComputation(module, *branch);
    Instruction* old_root = copy->root_instruction();
    std::vector<Instruction*> elements;
    for (int64_t i : kept) {
      HLOGYM_ASSIGN(element, MakeGetTupleElement(old_root, i));
      elements.push_back(element);
    }
    Instruction* root = MakeTuple(copy, elements);
    root->set_shape(new_shape);
    copy->set_root_instruction(root);
    branch = copy;
  }
  conditional->set_shape(new_shape);
  for (Instruction* user : conditional->users()) {
    user->mutable_attrs().tuple_index = new_index[user->attrs().tuple_index];
  }
  return true;
}

// A conditional nothing reads returns an empty tuple from copies of its branches (XLA's
// ReplaceRootWithEmptyTupleIfNoUsers).
bool ReturnNothingWhenUnread(Module& module, Instruction* conditional) {
  if (conditional->user_count() > 0 || conditional->IsRoot() ||
      (conditional->shape().IsTuple() && conditional->shape().tuple_shapes_size() == 0)) {
    return false;
  }
  const Shape empty = Shape::Tuple({});
  for (Computation*& branch : conditional->mutable_called_computations()) {
    Computation* copy = CloneComputation(module, *branch);
    Instruction* root = MakeTuple(copy, {});
    copy->set_root_instruction(root);
    branch = copy;
  }
  conditional->set_shape(empty);
  return true;
}

// A branch computation's parameter elements it never reads go: the branch is replaced by a copy
// with a narrower parameter, and each conditional that calls it passes a tuple of the read
// elements (XLA's TryRemoveUnusedConditionalOperands).
absl::StatusOr<bool> DropUnreadBranchOperands(Module& module, Computation* branch,
                                              const std::vector<Instruction*>& callers) {
  if (branch->num_parameters() != 1) return false;
  Instruction* param = branch->parameter_instruction(0);
  if (param->IsRoot() || !param->shape().IsTuple()) return false;
  const int64_t n = param->shape().tuple_shapes_size();
  std::vector<bool> read(n, false);
  for (const Instruction* user : param->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
    read[user->attrs().tuple_index] = true;
  }
  const auto [kept, new_index] = KeepRead(read);
  if (static_cast<int64_t>(kept.size()) == n) return false;
  std::vector<Shape> kept_shapes;
  for (int64_t i : kept) kept_shapes.push_back(param->shape().tuple_shapes(i));
  Shape new_shape = Shape::Tuple(kept_shapes);
  if (param->shape().has_layout()) new_shape.set_layout(*param->shape().layout());
  Computation* copy = CloneComputation(module, *branch);
  Instruction* new_param = copy->parameter_instruction(0);
  new_param->set_shape(new_shape);
  for (Instruction* user : new_param->users()) {
    user->mutable_attrs().tuple_index = new_index[user->attrs().tuple_index];
  }
  for (Instruction* conditional : callers) {
    auto& branches = conditional->mutable_called_computations();
    for (size_t b = 0; b < branches.size(); ++b) {
      if (branches[b] != branch) continue;
      branches[b] = copy;
      Instruction* operand = conditional->operand(static_cast<int64_t>(b) + 1);
      std::vector<Instruction*> elements;
      for (int64_t i : kept) {
        HLOGYM_ASSIGN(element, MakeGetTupleElement(operand, i));
        elements.push_back(element);
      }
      Instruction* tuple = MakeTuple(conditional->parent(), elements);
      tuple->set_shape(new_shape);
      conditional->ReplaceOperandWith(static_cast<int64_t>(b) + 1, tuple);
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> ConvertConditionalToSelect(Instruction* conditional) {
  const auto& branches = conditional->called_computations();
  const Instruction* selector = conditional->operand(0);
  if (branches.size() != 2 || conditional->operand_count() != 3 || !selector->shape().IsScalar() ||
      selector->shape().element_type() != PrimitiveType::kPred ||
      HoldsToken(conditional->shape()) || conditional->HasControlEdges() ||
      branches[0]->num_parameters() != 1 || branches[1]->num_parameters() != 1 ||
      ComputationHasSideEffect(*branches[0]) || ComputationHasSideEffect(*branches[1])) {
    return false;
  }
  Computation* parent = conditional->parent();
  HLOGYM_ASSIGN(on_true, InlineComputation(parent, *branches[0], {conditional->operand(1)}));
  HLOGYM_ASSIGN(on_false, InlineComputation(parent, *branches[1], {conditional->operand(2)}));
  HLOGYM_ASSIGN(result, SelectValues(conditional->operand(0), on_true, on_false));
  HLOGYM_RETURN_IF_ERROR(parent->ReplaceInstruction(conditional, result));
  return true;
}

bool ConditionalSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConditional});
}

absl::StatusOr<bool> ConditionalSimplifier::Run(Module& module) {
  std::vector<Instruction*> conditionals;
  for (const auto& computation : module.computations()) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kConditional) conditionals.push_back(instruction);
    }
  }
  bool changed = false;
  std::vector<Instruction*> remaining;
  for (Instruction* conditional : conditionals) {
    changed |= MergeDuplicateResultElements(conditional);
    HLOGYM_ASSIGN(narrowed, RemoveUnreadResultElements(module, conditional));
    changed |= narrowed;
    changed |= ReturnNothingWhenUnread(module, conditional);
    HLOGYM_ASSIGN(removed, TryRemoveConditional(conditional));
    changed |= removed;
    if (!removed) remaining.push_back(conditional);
  }
  // Then the branches' unread operands, for every conditional that calls a branch at once, in
  // the order the branches first come up.
  std::vector<Computation*> branches;
  std::map<Computation*, std::vector<Instruction*>> callers;
  for (Instruction* conditional : remaining) {
    for (Computation* branch : conditional->called_computations()) {
      auto& calling = callers[branch];
      if (calling.empty()) branches.push_back(branch);
      if (absl::c_find(calling, conditional) == calling.end()) calling.push_back(conditional);
    }
  }
  for (Computation* branch : branches) {
    HLOGYM_ASSIGN(dropped, DropUnreadBranchOperands(module, branch, callers[branch]));
    changed |= dropped;
  }
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

}  // namespace hlogym
