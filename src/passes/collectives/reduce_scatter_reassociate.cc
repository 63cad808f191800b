#include "passes/collectives/reduce_scatter_reassociate.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr char kSchedulingGroup[] = "_scheduling_group_id";

std::optional<std::string> SchedulingGroup(const Instruction& instruction) {
  auto entries = GetFrontendAttributes(instruction);
  if (!entries) return std::nullopt;
  for (const FrontendAttribute& entry : *entries) {
    if (entry.key == kSchedulingGroup) return entry.value;
  }
  return std::nullopt;
}

void DropSchedulingGroup(Instruction& instruction) {
  auto entries = GetFrontendAttributes(instruction);
  if (!entries) return;
  std::vector<FrontendAttribute> kept;
  for (const FrontendAttribute& entry : *entries) {
    if (entry.key != kSchedulingGroup) kept.push_back(entry);
  }
  SetFrontendAttributes(instruction, kept);
}

bool IsSingleReduceScatter(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kReduceScatter && instruction->operand_count() == 1 &&
         instruction->shape().IsArray();
}

}  // namespace

absl::StatusOr<bool> ReduceScatterReassociate::Run(Module& module) {
  if (ModuleHasConstrainedLayout(module, Opcode::kReduceScatter)) return false;
  int64_t next_channel_id = NextChannelId(module);
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* op : computation->MakeInstructionPostOrder()) {
      std::optional<ReductionKind> kind = MatchReductionInstruction(*op);
      if (!kind || op->operand_count() != 2 || !op->shape().IsArray()) continue;
      Instruction* rs0 = op->operand(0);
      Instruction* rs1 = op->operand(1);
      if (!IsSingleReduceScatter(rs0) || !IsSingleReduceScatter(rs1)) continue;
      HLOGYM_ASSIGN(key0, GetCollectiveKey(*rs0));
      HLOGYM_ASSIGN(key1, GetCollectiveKey(*rs1));
      if (!key0 || !key1 || !(*key0 == *key1) || key0->kind != *kind ||
          rs0->attrs().dimensions != rs1->attrs().dimensions) {
        continue;
      }
      if (rs0->user_count() != 1 || rs1->user_count() != 1 || rs0->IsRoot() || rs1->IsRoot() ||
          !rs0->operand(0)->shape().Compatible(rs1->operand(0)->shape()) ||
          rs0->shape().element_type() != op->shape().element_type()) {
        continue;
      }
      std::optional<std::string> group0 = SchedulingGroup(*rs0);
      std::optional<std::string> group1 = SchedulingGroup(*rs1);
      if (group0 && group1 && *group0 != *group1) continue;

      std::unique_ptr<Instruction> combined_op =
          op->CloneWithNewOperands({rs0->operand(0), rs1->operand(0)}, "");
      combined_op->set_shape(rs0->operand(0)->shape());
      Instruction* new_op = computation->AddInstruction(std::move(combined_op));
      std::unique_ptr<Instruction> scatter = rs0->CloneWithNewOperands({new_op}, "");
      scatter->set_shape(op->shape());
      if (group0.has_value() != group1.has_value()) DropSchedulingGroup(*scatter);
      if (HasChannelId(*scatter)) SetChannelId(*scatter, next_channel_id++);
      Instruction* new_rs = computation->AddInstruction(std::move(scatter));
      HLOGYM_RETURN_IF_ERROR(op->ReplaceAllUsesWith(new_rs));
      for (Instruction* dead : {op, rs0, rs1}) {
        if (dead == rs1 && rs1 == rs0) break;
        HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(dead));
      }
      changed = true;
    }
  }
  return changed;
}

bool ReduceScatterReassociate::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReduceScatter});
}

}  // namespace hlogym
