#include "passes/control_flow/conditional_simplifier.h"

#include <functional>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
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
    if (BranchIsExpensive(*branch)) return false;
  }
  return ConvertConditionalToSelect(conditional);
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
  for (Instruction* conditional : conditionals) {
    HLOGYM_ASSIGN(removed, TryRemoveConditional(conditional));
    changed |= removed;
  }
  return changed;
}

}  // namespace hlogym
