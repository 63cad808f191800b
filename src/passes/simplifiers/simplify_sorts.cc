#include "passes/simplifiers/simplify_sorts.h"

#include <memory>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

// A copy of `comparator` keeping the parameters of the operands in `kept`
// (parameters 2i and 2i+1 for operand i), renumbered.
Computation* ReducedComparator(Module& module, const Computation& comparator,
                               const std::vector<int64_t>& kept) {
  auto copy = std::make_unique<Computation>(module.UniqueName(comparator.name()));
  copy->mutable_raw_attributes() = comparator.raw_attributes();
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (size_t k = 0; k < kept.size(); ++k) {
    for (int64_t side = 0; side < 2; ++side) {
      const Instruction* parameter = comparator.parameter_instruction(2 * kept[k] + side);
      auto clone = std::make_unique<Instruction>(Opcode::kParameter, parameter->shape(),
                                                 module.UniqueName(parameter->name()));
      clone->mutable_attrs() = parameter->attrs();
      clone->mutable_attrs().parameter_number = static_cast<int64_t>(2 * k + side);
      map[parameter] = copy->AddInstruction(std::move(clone));
    }
  }
  for (Instruction* instruction : comparator.MakeInstructionPostOrder()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    map[instruction] = copy->AddInstruction(
        instruction->CloneWithNewOperands(operands, module.UniqueName(instruction->name())));
  }
  copy->set_root_instruction(map.at(comparator.root_instruction()));
  return module.AddComputation(std::move(copy));
}

// Rewrites one sort; false if it cannot be simplified.
absl::StatusOr<bool> SimplifySort(Module& module, Instruction* sort) {
  if (!sort->shape().IsTuple() || sort->operand_count() < 2 || sort->IsRoot()) return false;
  if (!sort->control_predecessors().empty() || !sort->control_successors().empty()) return false;
  const Computation* comparator = sort->to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * sort->operand_count()) {
    return false;
  }
  std::set<int64_t> used;
  for (const Instruction* user : sort->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
    used.insert(user->attrs().tuple_index);
  }
  for (int64_t i = 0; i < sort->operand_count(); ++i) {
    if (!comparator->parameter_instruction(2 * i)->users().empty() ||
        !comparator->parameter_instruction(2 * i + 1)->users().empty()) {
      used.insert(i);
    }
  }
  if (static_cast<int64_t>(used.size()) == sort->operand_count()) return false;
  std::vector<int64_t> kept(used.begin(), used.end());
  if (kept.empty()) return false;  // a dead sort: dce's business
  Computation* parent = sort->parent();
  std::vector<Shape> shapes;
  auto new_sort = std::make_unique<Instruction>(Opcode::kSort, Shape());
  new_sort->mutable_attrs() = sort->attrs();
  for (int64_t i : kept) {
    new_sort->AppendOperand(sort->operand(i));
    shapes.push_back(sort->shape().tuple_shapes(i));
  }
  new_sort->set_shape(kept.size() == 1 ? shapes[0] : Shape::Tuple(shapes));
  new_sort->mutable_called_computations() = {ReducedComparator(module, *comparator, kept)};
  Instruction* replacement = parent->AddInstruction(std::move(new_sort));
  absl::flat_hash_map<int64_t, int64_t> new_index;
  for (size_t k = 0; k < kept.size(); ++k) new_index[kept[k]] = static_cast<int64_t>(k);
  for (Instruction* gte : std::vector<Instruction*>(sort->users())) {
    int64_t index = new_index.at(gte->attrs().tuple_index);
    if (kept.size() == 1) {
      HLOGYM_RETURN_IF_ERROR(gte->ReplaceAllUsesWith(replacement));
      HLOGYM_RETURN_IF_ERROR(parent->RemoveInstruction(gte));
    } else {
      gte->ReplaceOperandWith(0, replacement);
      gte->mutable_attrs().tuple_index = index;
    }
  }
  HLOGYM_RETURN_IF_ERROR(parent->RemoveInstruction(sort));
  return true;
}

}  // namespace

absl::StatusOr<bool> SortSimplifier::Run(Module& module) {
  std::vector<Instruction*> sorts;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kSort) sorts.push_back(instruction.get());
    }
  }
  bool changed = false;
  for (Instruction* sort : sorts) {
    HLOGYM_ASSIGN(simplified, SimplifySort(module, sort));
    changed |= simplified;
  }
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

bool SortSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kSort});
}

}  // namespace hlogym
