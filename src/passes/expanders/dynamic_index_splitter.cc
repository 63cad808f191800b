#include "passes/expanders/dynamic_index_splitter.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

// Rewrites one dynamic-slice / dynamic-update-slice; false when its indices
// are already scalars.
absl::StatusOr<bool> Split(Instruction* op) {
  Computation* computation = op->parent();
  const bool is_update = op->opcode() == Opcode::kDynamicUpdateSlice;
  const int64_t first_index = is_update ? 2 : 1;
  if (op->operand_count() < first_index) {
    return absl::InvalidArgumentError(absl::StrCat(op->name(), ": too few operands"));
  }
  const Shape& operand_shape = op->operand(0)->shape();
  if (!operand_shape.IsArray()) {
    return absl::InvalidArgumentError(absl::StrCat(op->name(), ": operand is not an array"));
  }
  const int64_t rank = operand_shape.rank();
  if (rank == 0) {
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(op, op->operand(is_update ? 1 : 0)));
    return true;
  }
  if (op->operand_count() != first_index + 1) return false;  // one scalar per dimension
  Instruction* indices = op->operand(first_index);
  if (indices->shape().IsScalar()) return false;
  if (!indices->shape().IsArray() || indices->shape().rank() != 1 ||
      indices->shape().dimensions(0) != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(op->name(), ": start indices ", indices->shape().ToString(),
                     " are neither scalars nor a vector of length ", rank));
  }
  std::vector<Instruction*> operands(op->operands().begin(), op->operands().begin() + first_index);
  for (int64_t d = 0; d < rank; ++d) {
    SliceDimension slice{d, d + 1, 1};
    HLOGYM_ASSIGN(element, MakeSlice(indices, std::span<const SliceDimension>(&slice, 1)));
    HLOGYM_ASSIGN(scalar, MakeReshape(element, {}));
    operands.push_back(scalar);
  }
  Instruction* replacement = computation->AddInstruction(op->CloneWithNewOperands(operands, ""));
  HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(op, replacement));
  return true;
}

}  // namespace

absl::StatusOr<bool> DynamicIndexSplitter::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> ops;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kDynamicSlice ||
          instruction->opcode() == Opcode::kDynamicUpdateSlice) {
        ops.push_back(instruction);
      }
    }
    for (Instruction* op : ops) {
      HLOGYM_ASSIGN(split, Split(op));
      changed |= split;
    }
  }
  return changed;
}

bool DynamicIndexSplitter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDynamicSlice, Opcode::kDynamicUpdateSlice});
}

}  // namespace hlogym
