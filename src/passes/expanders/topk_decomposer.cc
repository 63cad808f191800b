#include "passes/expanders/topk_decomposer.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

// A sort comparator over `types` (two scalar parameters per type) that
// compares only the first pair: GT when `largest`, else LT.
Computation* MakeComparator(Module& module, const std::vector<PrimitiveType>& types, bool largest) {
  auto comparator = std::make_unique<Computation>(
      module.UniqueName(largest ? "compare-greater-than" : "compare-less-than"));
  std::vector<Instruction*> parameters;
  for (size_t i = 0; i < types.size(); ++i) {
    for (const char* side : {"lhs", "rhs"}) {
      auto parameter =
          std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(types[i]),
                                        module.UniqueName(absl::StrCat("p.", i, ".", side)));
      parameter->mutable_attrs().parameter_number = static_cast<int64_t>(parameters.size());
      parameters.push_back(comparator->AddInstruction(std::move(parameter)));
    }
  }
  auto compare =
      std::make_unique<Instruction>(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred));
  compare->AppendOperand(parameters[0]);
  compare->AppendOperand(parameters[1]);
  compare->mutable_attrs().comparison_direction =
      largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  if (IsFloatingPointType(types[0])) {
    compare->mutable_attrs().comparison_type = ComparisonType::kTotalOrder;
  }
  Computation* added = module.AddComputation(std::move(comparator));
  added->set_root_instruction(added->AddInstruction(std::move(compare)));
  return added;
}

std::unique_ptr<Instruction> NewSort(const Shape& shape, std::vector<Instruction*> operands,
                                     int64_t dimension, Computation* comparator) {
  auto sort = std::make_unique<Instruction>(Opcode::kSort, shape);
  for (Instruction* operand : operands) sort->AppendOperand(operand);
  sort->mutable_attrs().dimensions = {dimension};
  sort->mutable_attrs().is_stable = true;
  sort->mutable_called_computations() = {comparator};
  return sort;
}

// The first `k` elements of the last dimension of `operand`.
absl::StatusOr<Instruction*> Head(Instruction* operand, int64_t k) {
  std::vector<SliceDimension> slice;
  for (int64_t d : operand->shape().dimensions()) slice.push_back({0, d, 1});
  slice.back().limit = k;
  return MakeSlice(operand, slice);
}

absl::Status Decompose(Module& module, Instruction* topk) {
  Computation* computation = topk->parent();
  Instruction* input = topk->operand(0);
  const Shape& shape = topk->shape();
  if (!input->shape().IsArray() || input->shape().rank() < 1 || !shape.IsTuple() ||
      shape.tuple_shapes_size() != 2 || !shape.tuple_shapes(0).IsArray() ||
      shape.tuple_shapes(0).rank() != input->shape().rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat(topk->name(), ": unexpected top-k shape ", shape.ToString()));
  }
  const int64_t dimension = input->shape().rank() - 1;
  const int64_t k = shape.tuple_shapes(0).dimensions(dimension);
  const PrimitiveType type = input->shape().element_type();
  Computation* comparator = nullptr;
  bool values_only = false;
  if (topk->opcode() == Opcode::kTopK) {
    values_only = topk->user_count() == 1 && !topk->IsRoot() &&
                  topk->users()[0]->opcode() == Opcode::kGetTupleElement &&
                  topk->users()[0]->attrs().tuple_index == 0;
    std::vector<PrimitiveType> types = {type};
    if (!values_only) types.push_back(PrimitiveType::kS32);
    comparator = MakeComparator(module, types, topk->attrs().largest);
  } else {
    comparator = topk->to_apply();
    if (comparator == nullptr || comparator->num_parameters() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(topk->name(), ": TopK custom call needs a 4-parameter comparator"));
    }
  }
  if (values_only) {
    Instruction* sort = AddWithLayoutOf(
        computation, NewSort(input->shape(), {input}, dimension, comparator), input);
    HLOGYM_ASSIGN(head, Head(sort, k));
    return computation->ReplaceInstruction(topk->users()[0], head);
  }
  Shape iota_shape = input->shape();
  iota_shape.set_element_type(PrimitiveType::kS32);
  auto iota_instruction = std::make_unique<Instruction>(Opcode::kIota, iota_shape);
  iota_instruction->mutable_attrs().iota_dimension = dimension;
  Instruction* iota = AddWithLayoutOf(computation, std::move(iota_instruction), input);
  Shape sort_shape = Shape::Tuple({input->shape(), iota_shape});
  Instruction* sort = AddWithLayoutOf(
      computation, NewSort(sort_shape, {input, iota}, dimension, comparator), input);
  std::vector<Instruction*> heads;
  for (int64_t i = 0; i < 2; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(sort, i));
    HLOGYM_ASSIGN(head, Head(element, k));
    heads.push_back(head);
  }
  return computation->ReplaceInstruction(topk, MakeTuple(computation, heads));
}

}  // namespace

absl::StatusOr<bool> TopkDecomposer::Run(Module& module) {
  std::vector<Instruction*> matched;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kTopK ||
          (custom_calls_ && instruction->opcode() == Opcode::kCustomCall &&
           instruction->attrs().custom_call_target == "TopK")) {
        matched.push_back(instruction.get());
      }
    }
  }
  for (Instruction* topk : matched) {
    HLOGYM_RETURN_IF_ERROR(Decompose(module, topk));
  }
  if (!matched.empty()) module.SortComputationsCalleesFirst();
  return !matched.empty();
}

bool TopkDecomposer::MayChange(const Module& module) const {
  return custom_calls_ ? ContainsOpcode(module, {Opcode::kTopK, Opcode::kCustomCall})
                       : ContainsOpcode(module, {Opcode::kTopK});
}

}  // namespace hlogym
