#include "passes/simplifiers/tuple_simplifier.h"

#include <algorithm>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

// The tuple(gte(x,0..n-1)) -> x rewrite: x, or nullptr.
Instruction* WholeTupleSource(const Instruction* tuple) {
  if (tuple->operand_count() == 0) return nullptr;
  Instruction* source = nullptr;
  for (int64_t i = 0; i < tuple->operand_count(); ++i) {
    const Instruction* element = tuple->operand(i);
    if (element->opcode() != Opcode::kGetTupleElement || element->attrs().tuple_index != i) {
      return nullptr;
    }
    if (source == nullptr) {
      source = element->operand(0);
    } else if (source != element->operand(0)) {
      return nullptr;
    }
  }
  if (!source->shape().IsTuple() || source->shape().tuple_shapes_size() != tuple->operand_count() ||
      !source->shape().Compatible(tuple->shape())) {
    return nullptr;
  }
  return source;
}

// The value a get-tuple-element forwards from a tuple, or nullptr.
Instruction* ForwardedElement(const Instruction* gte) {
  std::vector<int64_t> path;
  const Instruction* current = gte;
  while (current->opcode() == Opcode::kGetTupleElement) {
    path.push_back(current->attrs().tuple_index);
    current = current->operand(0);
  }
  if (current->opcode() != Opcode::kTuple) return nullptr;
  std::reverse(path.begin(), path.end());
  Instruction* value = const_cast<Instruction*>(current);
  size_t consumed = 0;
  while (consumed < path.size() && value->opcode() == Opcode::kTuple) {
    int64_t index = path[consumed++];
    if (index < 0 || index >= value->operand_count()) return nullptr;
    value = value->operand(index);
  }
  if (consumed != path.size()) return nullptr;
  return value;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    bool candidates = false;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kTuple ||
          instruction->opcode() == Opcode::kGetTupleElement) {
        candidates = true;
        break;
      }
    }
    if (!candidates) continue;
    std::vector<Instruction*> post_order = computation->MakeInstructionPostOrder();
    for (Instruction* instruction : post_order) {
      if (!instruction->control_successors().empty()) continue;
      Instruction* replacement = nullptr;
      if (instruction->opcode() == Opcode::kTuple) {
        replacement = WholeTupleSource(instruction);
      } else if (instruction->opcode() == Opcode::kGetTupleElement) {
        replacement = ForwardedElement(instruction);
      }
      if (replacement == nullptr || replacement == instruction) continue;
      HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, replacement));
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

// Both rewrites need a get-tuple-element (a tuple is folded only when made of them).
bool TupleSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kGetTupleElement});
}

}  // namespace hlogym
