#include "passes/collectives/all_gather_dynamic_slice_simplifier.h"

#include <optional>

#include "hlo/query.h"
#include "passes/collectives/collective_opt_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool Matches(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kDynamicSlice || instruction->operand_count() < 1) {
    return false;
  }
  const Instruction* all_gather = instruction->operand(0);
  if (all_gather->opcode() != Opcode::kAllGather || all_gather->operand_count() != 1 ||
      all_gather->attrs().dimensions.size() != 1) {
    return false;
  }
  std::optional<DynamicSliceSpec> spec = MatchDynamicSliceOfCollective(all_gather);
  return spec.has_value() && spec->dynamic_slice == instruction &&
         spec->split_dim == all_gather->attrs().dimensions[0] &&
         all_gather->operand(0)->shape().Compatible(instruction->shape());
}

absl::StatusOr<Instruction*> Simplify(Instruction* dynamic_slice) {
  return dynamic_slice->operand(0)->operand(0);
}

}  // namespace

bool AllGatherDynamicSliceSimplifier::MayChange(const Module& module) const {
  // The rewrite needs a dynamic-slice of an all-gather.
  return ContainsOpcode(module, {Opcode::kAllGather}) &&
         ContainsOpcode(module, {Opcode::kDynamicSlice});
}

absl::StatusOr<bool> AllGatherDynamicSliceSimplifier::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Simplify);
}

}  // namespace hlogym
