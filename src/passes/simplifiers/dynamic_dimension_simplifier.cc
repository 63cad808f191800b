#include "passes/simplifiers/dynamic_dimension_simplifier.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Redirects the uses of `from` to `to`; whether anything changed.
absl::StatusOr<bool> Forward(Instruction* from, Instruction* to) {
  if (from == to || (from->user_count() == 0 && !from->IsRoot())) return false;
  HLOGYM_RETURN_IF_ERROR(from->ReplaceAllUsesWith(to));
  return true;
}

int64_t ConcatDimension(const Instruction* concat) {
  return concat->attrs().dimensions.empty() ? -1 : concat->attrs().dimensions[0];
}

absl::StatusOr<bool> FlattenConcat(Instruction* concat) {
  if (concat->opcode() != Opcode::kConcatenate) return false;
  const int64_t dimension = ConcatDimension(concat);
  std::vector<Instruction*> operands;
  bool nested = false;
  for (Instruction* operand : concat->operands()) {
    if (operand->opcode() == Opcode::kConcatenate && ConcatDimension(operand) == dimension) {
      nested = true;
      operands.insert(operands.end(), operand->operands().begin(), operand->operands().end());
    } else {
      operands.push_back(operand);
    }
  }
  if (!nested) return false;
  auto flat = std::make_unique<Instruction>(Opcode::kConcatenate, concat->shape());
  for (Instruction* operand : operands) flat->AppendOperand(operand);
  flat->mutable_attrs().dimensions = {dimension};
  Computation* computation = concat->parent();
  Instruction* added = computation->AddInstruction(std::move(flat));
  HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(concat, added));
  return true;
}

absl::StatusOr<bool> ForwardSliceOfConcat(Instruction* slice) {
  if (slice->opcode() != Opcode::kSlice || slice->shape().rank() != 1) return false;
  Instruction* concat = slice->operand(0);
  if (concat->opcode() != Opcode::kConcatenate || slice->attrs().slice.size() != 1) return false;
  const SliceDimension& range = slice->attrs().slice[0];
  const int64_t size = slice->shape().dimensions(0);
  if (size != range.limit - range.start || range.stride != 1) return false;
  int64_t offset = 0;
  for (Instruction* operand : concat->operands()) {
    if (offset == range.start && operand->shape().dimensions(0) == size) {
      return Forward(slice, operand);
    }
    offset += operand->shape().dimensions(0);
  }
  return false;
}

absl::StatusOr<bool> ForwardScalarThroughBroadcast(Instruction* reshape) {
  if (reshape->opcode() != Opcode::kReshape || reshape->shape().rank() != 0) return false;
  Instruction* broadcast = reshape->operand(0);
  if (broadcast->opcode() != Opcode::kBroadcast || broadcast->shape().rank() != 1 ||
      broadcast->operand(0)->shape().rank() != 0) {
    return false;
  }
  return Forward(reshape, broadcast->operand(0));
}

absl::StatusOr<bool> ForwardReshapeOfReshape(Instruction* reshape) {
  if (reshape->opcode() != Opcode::kReshape) return false;
  Instruction* inner = reshape->operand(0);
  if (inner->opcode() != Opcode::kReshape ||
      !reshape->shape().Equal(inner->operand(0)->shape(),
                              {.layouts = Shape::Layouts::kCompareWhereBothHave})) {
    return false;
  }
  return Forward(reshape, inner->operand(0));
}

absl::StatusOr<bool> ForwardIdentity(Instruction* instruction, Opcode opcode) {
  if (instruction->opcode() != opcode ||
      !instruction->shape().Equal(instruction->operand(0)->shape(),
                                  {.layouts = Shape::Layouts::kCompareWhereBothHave})) {
    return false;
  }
  return Forward(instruction, instruction->operand(0));
}

}  // namespace

absl::StatusOr<bool> DynamicDimensionSimplifier::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  struct Sweep {
    std::function<absl::StatusOr<bool>(Instruction*)> rewrite;
    std::vector<Opcode> needs;  // a computation without all of these has nothing for it
  };
  const std::vector<Sweep> sweeps = {
      {FlattenConcat, {Opcode::kConcatenate}},
      {ForwardSliceOfConcat, {Opcode::kSlice, Opcode::kConcatenate}},
      {ForwardScalarThroughBroadcast, {Opcode::kReshape, Opcode::kBroadcast}},
      {ForwardReshapeOfReshape, {Opcode::kReshape}},
      {[](Instruction* i) { return ForwardIdentity(i, Opcode::kConvert); }, {Opcode::kConvert}},
      {[](Instruction* i) { return ForwardIdentity(i, Opcode::kReshape); }, {Opcode::kReshape}},
  };
  // As XLA's, fused computations are left alone. The sweeps add and remove instructions only, so
  // the list is found once.
  const std::vector<Computation*> computations = NonFusionComputations(module);
  bool changed = false;
  for (const Sweep& sweep : sweeps) {
    for (Computation* computation : computations) {
      if (!run.MustVisit(*computation)) continue;
      if (!std::all_of(sweep.needs.begin(), sweep.needs.end(),
                       [&](Opcode op) { return computation->opcode_count(op) > 0; })) {
        continue;
      }
      for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
        HLOGYM_ASSIGN(local, sweep.rewrite(instruction));
        changed |= local;
      }
    }
  }
  run.Complete();
  return changed;
}

bool DynamicDimensionSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConcatenate, Opcode::kReshape, Opcode::kConvert});
}

}  // namespace hlogym
