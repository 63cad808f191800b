#include "passes/simplifiers/convert_mover.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

bool CommutesWithConvert(Opcode opcode) {
  switch (opcode) {
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}

bool IsSubByteNonPred(PrimitiveType type) {
  return type != PrimitiveType::kPred && BitWidth(type) < 8;
}

// Whether every element of `literal` survives conversion to `type` and back.
bool LosslesslyConvertible(const Literal& literal, PrimitiveType type) {
  if (literal.elided() || !literal.shape().IsArray()) return false;
  const PrimitiveType original = literal.shape().element_type();
  if (IsComplexType(original) || IsComplexType(type)) return false;
  Shape narrow_shape = literal.shape();
  narrow_shape.set_element_type(type);
  Literal narrow(narrow_shape);
  Literal back(literal.shape());
  const bool integral = (IsIntegralType(original) || original == PrimitiveType::kPred) &&
                        (IsIntegralType(type) || type == PrimitiveType::kPred);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (integral) {
      int64_t value = literal.GetAsInt64(i);
      narrow.SetFromInt64(i, value);
      back.SetFromInt64(i, narrow.GetAsInt64(i));
      if (back.GetAsInt64(i) != value || back.GetBits(i) != literal.GetBits(i)) return false;
    } else {
      double value = literal.GetAsDouble(i);
      narrow.SetFromDouble(i, value);
      double round_trip = narrow.GetAsDouble(i);
      if (round_trip != value) return false;  // NaN included
      back.SetFromDouble(i, round_trip);
      if (back.GetBits(i) != literal.GetBits(i)) return false;
    }
  }
  return true;
}

absl::StatusOr<Instruction*> ConvertTo(Instruction* operand, PrimitiveType type) {
  if (operand->shape().element_type() == type) return operand;
  return MakeConvert(operand, type);
}

absl::StatusOr<Instruction*> AddWithType(Instruction* original,
                                         const std::vector<Instruction*>& operands,
                                         PrimitiveType type) {
  auto clone = original->CloneWithNewOperands(operands, "");
  clone->mutable_shape().set_element_type(type);
  return original->parent()->AddInstruction(std::move(clone));
}

absl::StatusOr<bool> MoveWideningDown(Computation* computation) {
  bool changed = false;
  for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
    if (!CommutesWithConvert(hlo->opcode()) || hlo->operand_count() == 0) continue;
    const Instruction* convert = nullptr;
    bool eligible = true;
    for (const Instruction* operand : hlo->operands()) {
      if (operand->opcode() == Opcode::kConvert && operand->user_count() == 1) {
        if (convert == nullptr) convert = operand;
      } else if (operand->opcode() != Opcode::kConstant) {
        eligible = false;
        break;
      }
    }
    if (!eligible || convert == nullptr) continue;
    const PrimitiveType src = convert->operand(0)->shape().element_type();
    const PrimitiveType dst = convert->shape().element_type();
    bool same_source = true;
    for (const Instruction* operand : hlo->operands()) {
      if (operand->opcode() == Opcode::kConvert &&
          operand->operand(0)->shape().element_type() != src) {
        same_source = false;
      }
    }
    if (!same_source || BitWidth(src) >= BitWidth(dst)) continue;
    bool constants_ok = true;
    for (const Instruction* operand : hlo->operands()) {
      if (operand->opcode() == Opcode::kConstant &&
          !LosslesslyConvertible(operand->literal(), src)) {
        constants_ok = false;
      }
    }
    if (!constants_ok || IsSubByteNonPred(src)) continue;
    if (!hlo->control_predecessors().empty() || !hlo->control_successors().empty()) continue;

    std::vector<Instruction*> operands;
    for (Instruction* operand : hlo->operands()) {
      if (operand->opcode() == Opcode::kConvert) {
        operands.push_back(operand->operand(0));
      } else {
        HLOGYM_ASSIGN(converted, ConvertTo(operand, src));
        operands.push_back(converted);
      }
    }
    HLOGYM_ASSIGN(narrow, AddWithType(hlo, operands, src));
    auto widened = std::make_unique<Instruction>(Opcode::kConvert, hlo->shape());
    widened->AppendOperand(narrow);
    Instruction* replacement = computation->AddInstruction(std::move(widened));
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(hlo, replacement));
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> MoveNarrowingUp(Computation* computation) {
  bool changed = false;
  std::vector<Instruction*> order = computation->MakeInstructionPostOrder();
  std::deque<Instruction*> queue(order.rbegin(), order.rend());
  while (!queue.empty()) {
    Instruction* hlo = queue.front();
    queue.pop_front();
    if (hlo->opcode() != Opcode::kConvert) continue;
    Instruction* inner = hlo->operand(0);
    if (inner->user_count() != 1 || !CommutesWithConvert(inner->opcode())) continue;
    const PrimitiveType src = inner->shape().element_type();
    const PrimitiveType dst = hlo->shape().element_type();
    if (BitWidth(src) <= BitWidth(dst) || IsSubByteNonPred(dst)) continue;
    if (!hlo->control_predecessors().empty() || !hlo->control_successors().empty() ||
        !inner->control_predecessors().empty() || !inner->control_successors().empty()) {
      continue;
    }
    std::vector<Instruction*> operands;
    for (Instruction* operand : inner->operands()) {
      HLOGYM_ASSIGN(converted, ConvertTo(operand, dst));
      queue.push_front(converted);
      operands.push_back(converted);
    }
    auto moved = AddWithType(inner, operands, dst);
    if (!moved.ok()) return moved.status();
    moved.value()->set_shape(hlo->shape());
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(hlo, *moved));
    // `inner` lost its only user and is gone; drop it from the queue before
    // anything new can reuse its address.
    queue.erase(std::remove(queue.begin(), queue.end(), inner), queue.end());
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ConvertMover::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  std::vector<Computation*> computations;
  for (const auto& owned : module.computations()) computations.push_back(owned.get());
  for (Computation* computation : computations) {
    if (!run.MustVisit(*computation)) continue;
    // Cheap test first: a convert next to an op it commutes with.
    bool any = false;
    for (const auto& owned : computation->instructions()) {
      const Instruction* hlo = owned.get();
      if (hlo->opcode() == Opcode::kConvert && CommutesWithConvert(hlo->operand(0)->opcode())) {
        any = true;
      } else if (CommutesWithConvert(hlo->opcode())) {
        for (const Instruction* operand : hlo->operands()) {
          if (operand->opcode() == Opcode::kConvert) any = true;
        }
      }
      if (any) break;
    }
    if (!any) continue;
    HLOGYM_ASSIGN(down, MoveWideningDown(computation));
    HLOGYM_ASSIGN(up, MoveNarrowingUp(computation));
    changed |= down || up;
  }
  run.Complete();
  return changed;
}

bool ConvertMover::MayChange(const Module& module) const {
  // Both moves need a convert next to an op it commutes with.
  return ContainsOpcode(module, {Opcode::kConvert}) &&
         ContainsOpcode(module, {Opcode::kConcatenate, Opcode::kPad, Opcode::kReshape,
                                 Opcode::kSlice, Opcode::kTranspose});
}

}  // namespace hlogym
