#include "passes/simplifiers/slice_sinker.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

bool IsPlainElementwise(const Instruction* hlo) {
  if (!IsElementwise(hlo->opcode()) || hlo->operand_count() == 0) return false;
  if (hlo->opcode() == Opcode::kBitcastConvert) {
    return BitWidth(hlo->shape().element_type()) ==
           BitWidth(hlo->operand(0)->shape().element_type());
  }
  return hlo->shape().IsArray();
}

bool SameSlicing(const Instruction* a, const Instruction* b) {
  return a->attrs().slice == b->attrs().slice;
}

// All operands are slices, taken at the same indices of sources with the
// same dimensions.
bool OperatesOnSimilarSlices(const Instruction* hlo) {
  const Instruction* first = hlo->operand(0);
  for (const Instruction* operand : hlo->operands()) {
    if (operand->opcode() != Opcode::kSlice) return false;
    if (!operand->operand(0)->shape().SameDimensions(first->operand(0)->shape()) ||
        !SameSlicing(first, operand)) {
      return false;
    }
  }
  return true;
}

bool SameOp(const Instruction* a, const Instruction* b) {
  return a->opcode() == b->opcode() && a->operand_count() == b->operand_count() &&
         a->IdenticalAttributes(*b) && a->called_computations() == b->called_computations();
}

bool IsSimilar(const Instruction* reference, const Instruction* candidate) {
  if (candidate->user_count() == 0) return false;
  if (!SameOp(reference, candidate) ||
      reference->shape().element_type() != candidate->shape().element_type()) {
    return false;
  }
  const Instruction* first = candidate->operand(0);
  for (int64_t i = 0; i < candidate->operand_count(); ++i) {
    const Instruction* operand = candidate->operand(i);
    if (operand->opcode() != Opcode::kSlice ||
        operand->operand(0) != reference->operand(i)->operand(0) || !SameSlicing(first, operand)) {
      return false;
    }
  }
  return true;
}

std::vector<Instruction*> FindGroup(const Instruction* reference) {
  std::vector<Instruction*> group;
  const Instruction* source = reference->operand(0)->operand(0);
  for (const Instruction* slice : source->users()) {
    if (slice->opcode() != Opcode::kSlice) continue;
    for (Instruction* user : slice->users()) {
      if (IsSimilar(reference, user)) group.push_back(user);
    }
  }
  int64_t covered = 0;
  for (const Instruction* member : group) covered += member->shape().ElementCount();
  if (covered < source->shape().ElementCount()) group.clear();
  return group;
}

absl::Status Sink(Instruction* reference, const std::vector<Instruction*>& group) {
  Computation* computation = reference->parent();
  std::vector<Instruction*> sources;
  for (Instruction* slice : reference->operands()) sources.push_back(slice->operand(0));
  Shape shape = sources[0]->shape();
  shape.set_element_type(group[0]->shape().element_type());
  auto whole = group[0]->CloneWithNewOperands(sources, "");
  whole->set_shape(shape);
  Instruction* on_sources = computation->AddInstruction(std::move(whole));
  for (Instruction* member : group) {
    auto slice = member->operand(0)->CloneWithNewOperands({on_sources}, "");
    slice->set_shape(member->shape());
    Instruction* replacement = computation->AddInstruction(std::move(slice));
    HLOGYM_RETURN_IF_ERROR(member->ReplaceAllUsesWith(replacement));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> SliceSinker::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    bool any_slice = false;
    for (const auto& hlo : computation->instructions()) {
      if (hlo->opcode() == Opcode::kSlice) {
        any_slice = true;
        break;
      }
    }
    if (!any_slice) continue;
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      if (!IsPlainElementwise(hlo) || hlo->user_count() == 0) continue;
      if (!OperatesOnSimilarSlices(hlo)) continue;
      std::vector<Instruction*> group = FindGroup(hlo);
      if (group.empty()) continue;
      HLOGYM_RETURN_IF_ERROR(Sink(hlo, group));
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

bool SliceSinker::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kSlice});
}

}  // namespace hlogym
