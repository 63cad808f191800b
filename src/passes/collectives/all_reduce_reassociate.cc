#include "passes/collectives/all_reduce_reassociate.h"

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Whether `value` is a scalar constant equal to the identity of `kind`.
bool IsIdentity(const Instruction* value, ReductionKind kind) {
  if (!value->IsConstant() || !value->shape().IsScalar() || value->attrs().literal == nullptr ||
      value->literal().elided()) {
    return false;
  }
  const PrimitiveType type = value->shape().element_type();
  const Literal& literal = value->literal();
  switch (kind) {
    case ReductionKind::kSum:
      return type == PrimitiveType::kPred ? !literal.GetAsBool(0) : literal.IsAll(0);
    case ReductionKind::kProduct:
      return literal.IsAll(1);
    case ReductionKind::kMin:
    case ReductionKind::kMax: {
      if (type == PrimitiveType::kPred) {
        return literal.GetAsBool(0) == (kind == ReductionKind::kMin);
      }
      if (!IsFloatingPointType(type)) return false;
      const double v = literal.GetAsDouble(0);
      return std::isinf(v) && ((v > 0) == (kind == ReductionKind::kMin));
    }
  }
  return false;
}

// The all-reduce at the end of a reshape / slice / identity-pad chain from
// `instruction`, every link used once; nullptr when there is none.
Instruction* LookThrough(Instruction* instruction, ReductionKind kind) {
  while (instruction->opcode() != Opcode::kAllReduce) {
    if (instruction->user_count() != 1 || instruction->operand_count() < 1) return nullptr;
    switch (instruction->opcode()) {
      case Opcode::kReshape:
      case Opcode::kSlice:
        break;
      case Opcode::kPad:
        if (instruction->operand_count() != 2 || !IsIdentity(instruction->operand(1), kind)) {
          return nullptr;
        }
        break;
      default:
        return nullptr;
    }
    instruction = instruction->operand(0);
  }
  if (instruction->user_count() != 1 || instruction->IsRoot() ||
      instruction->operand_count() != 1 || !instruction->shape().IsArray()) {
    return nullptr;
  }
  return instruction;
}

}  // namespace

bool AllReduceReassociate::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllReduce});
}

absl::StatusOr<bool> AllReduceReassociate::Run(Module& module) {
  if (ModuleHasConstrainedLayout(module, Opcode::kAllReduce)) return false;
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* op : computation->MakeInstructionPostOrder()) {
      std::optional<ReductionKind> kind = MatchReductionInstruction(*op);
      if (!kind || op->operand_count() != 2 || !op->shape().IsArray()) continue;
      Instruction* ar0 = LookThrough(op->operand(0), *kind);
      Instruction* ar1 = ar0 == nullptr ? nullptr : LookThrough(op->operand(1), *kind);
      if (ar1 == nullptr) continue;
      int64_t before = ar0->shape().ElementCount();
      if (ar0 != ar1) before += ar1->shape().ElementCount();
      if (before < op->shape().ElementCount()) continue;
      HLOGYM_ASSIGN(key0, GetCollectiveKey(*ar0));
      HLOGYM_ASSIGN(key1, GetCollectiveKey(*ar1));
      if (!key0 || !key1 || !(*key0 == *key1) || key0->kind != *kind) continue;
      if (ar0->shape().element_type() != op->shape().element_type()) continue;

      const std::vector<Instruction*> users = op->users();
      const bool was_root = op->IsRoot();
      HLOGYM_RETURN_IF_ERROR(ar0->ReplaceAllUsesWith(ar0->operand(0)));
      if (ar1 != ar0) {
        HLOGYM_RETURN_IF_ERROR(ar1->ReplaceAllUsesWith(ar1->operand(0)));
      }
      std::unique_ptr<Instruction> clone = ar0->CloneWithNewOperands({op}, "");
      clone->set_shape(op->shape());
      Instruction* reduced = computation->AddInstruction(std::move(clone));
      for (Instruction* user : users) user->ReplaceUsesOfOperand(op, reduced);
      if (was_root) computation->set_root_instruction(reduced);
      HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(ar0));
      if (ar1 != ar0) {
        HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(ar1));
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym
