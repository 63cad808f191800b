#include "passes/expanders/stable_sort_expander.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

absl::Status Invalid(const Instruction* sort, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(sort->name(), ": ", std::string(what)));
}

// Checks what the rewrite relies on; returns the sort dimension.
absl::StatusOr<int64_t> CheckSort(const Instruction* sort) {
  if (sort->operand_count() == 0) return Invalid(sort, "sort without operands");
  if (sort->attrs().dimensions.size() != 1) return Invalid(sort, "sort needs one dimension");
  const int64_t dimension = sort->attrs().dimensions[0];
  for (const Instruction* operand : sort->operands()) {
    if (!operand->shape().IsArray() || dimension < 0 || dimension >= operand->shape().rank() ||
        !operand->shape().SameDimensions(sort->operand(0)->shape())) {
      return Invalid(sort, "sort operands must be arrays of one shape containing the dimension");
    }
  }
  const Computation* comparator = sort->to_apply();
  if (comparator == nullptr || sort->called_computations().size() != 1 ||
      comparator->num_parameters() != 2 * sort->operand_count() ||
      comparator->root_instruction() == nullptr ||
      !comparator->root_instruction()->shape().IsScalar() ||
      comparator->root_instruction()->shape().element_type() != PrimitiveType::kPred) {
    return Invalid(sort,
                   "sort needs a comparator with two parameters per operand returning pred[]");
  }
  if (sort->operand_count() == 1 ? !sort->shape().IsArray()
                                 : !sort->shape().IsTuple() ||
                                       sort->shape().tuple_shapes_size() != sort->operand_count()) {
    return Invalid(sort, "sort result does not match its operands");
  }
  return dimension;
}

// An operand usable as the tie breaker: an s32 iota along the sort dimension.
int64_t FindIotaOperand(const Instruction* sort, int64_t dimension) {
  for (int64_t i = 0; i < sort->operand_count(); ++i) {
    const Instruction* operand = sort->operand(i);
    if (operand->opcode() == Opcode::kIota && operand->attrs().iota_dimension == dimension &&
        operand->shape().element_type() == PrimitiveType::kS32) {
      return i;
    }
  }
  return -1;
}

// Adds the scalar s32 parameters `p.<index>.lhs`/`.rhs` to `comparator`.
void AddIotaParameters(Module& module, Computation* comparator, int64_t index) {
  Shape scalar = Shape::Scalar(PrimitiveType::kS32);
  if (comparator->num_parameters() > 0 &&
      comparator->parameter_instruction(0)->shape().has_layout()) {
    scalar.SetDefaultLayout();
  }
  for (const char* side : {"lhs", "rhs"}) {
    auto parameter = std::make_unique<Instruction>(
        Opcode::kParameter, scalar, module.UniqueName(absl::StrCat("p.", index, ".", side)));
    parameter->mutable_attrs().parameter_number = comparator->num_parameters();
    comparator->AddInstruction(std::move(parameter));
  }
}

// Rewrites `comparator`'s root into the tie-breaking form with the iota
// parameters 2*iota_index and 2*iota_index+1.
absl::Status AddTieBreaker(Module& module, Computation* comparator, int64_t iota_index) {
  Instruction* root = comparator->root_instruction();
  // The instructions the root depends on, callees first.
  absl::flat_hash_set<const Instruction*> live;
  std::vector<Instruction*> stack = {root};
  while (!stack.empty()) {
    Instruction* top = stack.back();
    stack.pop_back();
    if (!live.insert(top).second) continue;
    for (Instruction* operand : top->operands()) stack.push_back(operand);
  }
  absl::flat_hash_map<const Instruction*, Instruction*> swapped;
  for (int64_t i = 0; i < comparator->num_parameters(); ++i) {
    swapped[comparator->parameter_instruction(i)] = comparator->parameter_instruction(i ^ 1);
  }
  for (Instruction* instruction : comparator->MakeInstructionPostOrder()) {
    if (!live.contains(instruction) || instruction->operand_count() == 0) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) {
      auto it = swapped.find(operand);
      operands.push_back(it == swapped.end() ? operand : it->second);
    }
    swapped[instruction] = comparator->AddInstruction(instruction->CloneWithNewOperands(
        operands, module.UniqueName(instruction->name() + ".swapped")));
  }
  auto found = swapped.find(root);
  Instruction* reversed = found == swapped.end() ? root : found->second;
  HLOGYM_ASSIGN(same, MakeCompare(ComparisonDirection::kEq, root, reversed));
  HLOGYM_ASSIGN(earlier, MakeCompare(ComparisonDirection::kLt,
                                     comparator->parameter_instruction(2 * iota_index),
                                     comparator->parameter_instruction(2 * iota_index + 1)));
  HLOGYM_ASSIGN(select, MakeSelect(same, earlier, root));
  comparator->set_root_instruction(select);
  return absl::OkStatus();
}

absl::Status Stabilize(Module& module, Instruction* sort) {
  HLOGYM_ASSIGN(dimension, CheckSort(sort));
  Computation* comparator = CloneComputation(module, *sort->to_apply());
  int64_t iota_index = FindIotaOperand(sort, dimension);
  if (iota_index >= 0) {
    sort->mutable_called_computations()[0] = comparator;
    sort->mutable_attrs().is_stable = false;
    return AddTieBreaker(module, comparator, iota_index);
  }
  Computation* computation = sort->parent();
  Shape iota_shape = sort->operand(0)->shape();
  if (iota_shape.dimensions(dimension) > std::numeric_limits<int32_t>::max()) {
    return absl::UnimplementedError(absl::StrCat(
        sort->name(), ": stable sorting of more than 2^31-1 elements is not implemented"));
  }
  iota_shape.set_element_type(PrimitiveType::kS32);
  auto iota_instruction = std::make_unique<Instruction>(Opcode::kIota, iota_shape);
  iota_instruction->mutable_attrs().iota_dimension = dimension;
  Instruction* iota = computation->AddInstruction(std::move(iota_instruction));
  iota_index = sort->operand_count();
  AddIotaParameters(module, comparator, iota_index);

  std::vector<Instruction*> operands = sort->operands();
  operands.push_back(iota);
  std::vector<Shape> shapes;
  if (sort->operand_count() == 1) {
    shapes.push_back(sort->shape());
  } else {
    shapes = sort->shape().tuple_shapes();
  }
  shapes.push_back(iota_shape);
  auto new_sort_instruction = sort->CloneWithNewOperands(operands, module.UniqueName(sort->name()));
  new_sort_instruction->set_shape(Shape::Tuple(std::move(shapes)));
  new_sort_instruction->mutable_called_computations()[0] = comparator;
  new_sort_instruction->mutable_attrs().is_stable = false;
  Instruction* new_sort = computation->AddInstruction(std::move(new_sort_instruction));
  HLOGYM_RETURN_IF_ERROR(AddTieBreaker(module, comparator, iota_index));

  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < sort->operand_count(); ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(new_sort, i));
    element->set_shape(sort->operand_count() == 1 ? sort->shape() : sort->shape().tuple_shapes(i));
    elements.push_back(element);
  }
  Instruction* replacement = elements.size() == 1 ? elements[0] : MakeTuple(computation, elements);
  return computation->ReplaceInstruction(sort, replacement);
}

}  // namespace

absl::StatusOr<bool> StableSortExpander::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Instruction*> sorts;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kSort && instruction->attrs().is_stable) {
        sorts.push_back(instruction);
      }
    }
  }
  if (sorts.empty()) {
    run.Complete();
    return false;
  }
  absl::flat_hash_set<Computation*> old_comparators;
  for (Instruction* sort : sorts) {
    if (sort->to_apply() != nullptr) old_comparators.insert(sort->to_apply());
    HLOGYM_RETURN_IF_ERROR(Stabilize(module, sort));
  }
  auto callers = ComputeCallers(module);
  for (Computation* comparator : old_comparators) {
    auto it = callers.find(comparator);
    if ((it == callers.end() || it->second.empty()) && comparator != module.entry_computation()) {
      HLOGYM_RETURN_IF_ERROR(module.RemoveComputation(comparator));
    }
  }
  run.Complete();
  return true;
}

bool StableSortExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kSort});
}

}  // namespace hlogym
