#include "passes/collectives/all_gather_optimizer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsCommutativeBinary(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

std::string RawOr(const Instruction& instruction, std::string_view key) {
  const RawAttribute* attr = instruction.attrs().FindRaw(key);
  return attr == nullptr ? std::string() : attr->value;
}

bool IsSingleAllGather(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kAllGather && instruction->operand_count() == 1 &&
         instruction->shape().IsArray() && instruction->attrs().dimensions.size() == 1;
}

}  // namespace

bool AllGatherOptimizer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllGather});
}

absl::StatusOr<bool> AllGatherOptimizer::Run(Module& module) {
  // Fusion bodies are skipped.
  absl::flat_hash_set<const Computation*> fusion_bodies;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kFusion) {
        for (const Computation* callee : instruction->called_computations()) {
          fusion_bodies.insert(callee);
        }
      }
    }
  }
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    if (fusion_bodies.contains(computation)) continue;
    for (Instruction* op : computation->MakeInstructionPostOrder()) {
      if (!IsCommutativeBinary(op->opcode()) || op->operand_count() != 2) continue;
      Instruction* left = op->operand(0);
      Instruction* right = op->operand(1);
      if (!IsSingleAllGather(left) || !IsSingleAllGather(right)) continue;
      if (HasConstrainedLayout(*left) != HasConstrainedLayout(*right) ||
          UsesGlobalDeviceIds(*left) != UsesGlobalDeviceIds(*right) ||
          RawOr(*left, "backend_config") != RawOr(*right, "backend_config")) {
        continue;
      }
      HLOGYM_ASSIGN(left_groups, GetReplicaGroups(*left));
      HLOGYM_ASSIGN(right_groups, GetReplicaGroups(*right));
      if (left_groups != right_groups) continue;
      if (!(left->operand(0)->shape() == right->operand(0)->shape())) continue;
      if (left->user_count() != 1 || right->user_count() != 1 || left->IsRoot() ||
          right->IsRoot()) {
        continue;
      }
      std::unique_ptr<Instruction> combined_op =
          op->CloneWithNewOperands({left->operand(0), right->operand(0)}, "");
      combined_op->set_shape(right->operand(0)->shape());
      combined_op->mutable_attrs().raw.clear();
      Instruction* new_op = computation->AddInstruction(std::move(combined_op));

      auto gather = std::make_unique<Instruction>(Opcode::kAllGather, left->shape());
      gather->AppendOperand(new_op);
      InstructionAttributes& attrs = gather->mutable_attrs();
      attrs.dimensions = right->attrs().dimensions;
      for (const char* key : {"channel_id", "replica_groups", "use_global_device_ids"}) {
        if (const RawAttribute* attr = left->attrs().FindRaw(key)) attrs.raw.push_back(*attr);
      }
      if (const RawAttribute* metadata = op->attrs().FindRaw("metadata")) {
        attrs.raw.push_back(*metadata);
      }
      if (const RawAttribute* config = left->attrs().FindRaw("backend_config")) {
        attrs.raw.push_back(*config);
      }
      Instruction* added = computation->AddInstruction(std::move(gather));
      HLOGYM_RETURN_IF_ERROR(op->ReplaceAllUsesWith(added));
      for (Instruction* dead : {op, left, right}) {
        if (dead == right && right == left) break;
        HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(dead));
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym
