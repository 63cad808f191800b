#include "passes/simplifiers/zero_sized_hlo_elimination.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// A constant of `instruction`'s zero-element shape (default layout where it
// has none), added to `computation`.
Instruction* EmptyConstant(Computation& computation, const Instruction& instruction) {
  Shape shape = instruction.shape();
  if (!shape.has_layout()) shape.SetDefaultLayout();
  auto constant = std::make_unique<Instruction>(Opcode::kConstant, shape);
  Shape literal_shape = shape;
  literal_shape.clear_layout();
  constant->mutable_attrs().literal = std::make_shared<const Literal>(Literal(literal_shape));
  return computation.AddInstruction(std::move(constant));
}

// Something reads the parameter: an operand use or the computation's result.
bool ReadParameter(const Instruction& parameter) {
  return !parameter.users().empty() || parameter.IsRoot();
}

}  // namespace

absl::StatusOr<bool> ZeroSizedHloElimination::Run(Module& module) {
  bool changed = false;
  SideEffectCache effects;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    std::vector<Instruction*> candidates;
    std::vector<Instruction*> parameters;
    for (const auto& instruction : computation->instructions()) {
      const Shape& shape = instruction->shape();
      if (!shape.IsArray() || shape.ElementCount() != 0 || !shape.is_static()) continue;
      Opcode op = instruction->opcode();
      if (op == Opcode::kConstant) continue;
      if (!instruction->control_predecessors().empty() ||
          !instruction->control_successors().empty()) {
        continue;
      }
      if (op == Opcode::kParameter) {
        // A parameter stays (the signature is fixed); as in XLA, its readers
        // take a constant instead, so later passes see the value is known.
        if (ReadParameter(*instruction)) parameters.push_back(instruction.get());
        continue;
      }
      if (effects.HasSideEffect(instruction.get())) continue;
      candidates.push_back(instruction.get());
    }
    for (Instruction* parameter : parameters) {
      HLOGYM_RETURN_IF_ERROR(
          parameter->ReplaceAllUsesWith(EmptyConstant(*computation, *parameter)));
      changed = true;
    }
    if (candidates.empty()) continue;
    // First redirect every use, then remove the replaced instructions and
    // the operands they leave dead (tracking what is gone, since one
    // candidate may be another's operand).
    for (Instruction* instruction : candidates) {
      HLOGYM_RETURN_IF_ERROR(
          instruction->ReplaceAllUsesWith(EmptyConstant(*computation, *instruction)));
      changed = true;
    }
    absl::flat_hash_set<Instruction*> removed;
    std::vector<Instruction*> worklist(candidates.rbegin(), candidates.rend());
    while (!worklist.empty()) {
      Instruction* current = worklist.back();
      worklist.pop_back();
      if (removed.contains(current) || !current->users().empty() || current->IsRoot() ||
          current->opcode() == Opcode::kParameter || effects.HasSideEffect(current) ||
          !current->control_predecessors().empty() || !current->control_successors().empty()) {
        continue;
      }
      std::vector<Instruction*> operands = current->operands();
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(current));
      removed.insert(current);
      for (Instruction* operand : operands) worklist.push_back(operand);
    }
  }
  return changed;
}

// Keyed on shapes: a candidate of Run (before its side-effect and
// control-edge checks) exists: a zero-element array that is not a constant,
// or a zero-element parameter something reads.
bool ZeroSizedHloElimination::MayChange(const Module& module) const {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const Shape& shape = instruction->shape();
      if (!shape.IsArray() || shape.ElementCount() != 0 || !shape.is_static()) continue;
      const Opcode op = instruction->opcode();
      if (op == Opcode::kParameter ? ReadParameter(*instruction) : op != Opcode::kConstant) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace hlogym
