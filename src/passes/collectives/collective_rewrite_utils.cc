#include "passes/collectives/collective_rewrite_utils.h"

#include <cctype>
#include <numeric>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {

bool RawIsTrue(const Instruction& instruction, std::string_view key) {
  const RawAttribute* attr = instruction.attrs().FindRaw(key);
  return attr != nullptr && attr->value == "true";
}

}  // namespace

bool HasChannelId(const Instruction& instruction) {
  return instruction.attrs().FindRaw("channel_id") != nullptr;
}
bool UsesGlobalDeviceIds(const Instruction& instruction) {
  return RawIsTrue(instruction, "use_global_device_ids");
}
bool HasConstrainedLayout(const Instruction& instruction) {
  return RawIsTrue(instruction, "constrain_layout");
}

bool ModuleHasConstrainedLayout(const Module& module, Opcode opcode) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == opcode && HasConstrainedLayout(*instruction)) return true;
    }
  }
  return false;
}

int64_t NextChannelId(const Module& module) {
  int64_t next = 1;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const RawAttribute* attr = instruction->attrs().FindRaw("channel_id");
      int64_t id = 0;
      if (attr != nullptr && absl::SimpleAtoi(attr->value, &id) && id >= next) next = id + 1;
    }
  }
  return next;
}

void SetChannelId(Instruction& instruction, int64_t channel_id) {
  instruction.mutable_attrs().SetRaw("channel_id", std::to_string(channel_id));
}

std::optional<ReductionKind> MatchReductionInstruction(const Instruction& instruction) {
  const bool pred = instruction.shape().element_type() == PrimitiveType::kPred;
  switch (instruction.opcode()) {
    case Opcode::kAdd:
      return ReductionKind::kSum;
    case Opcode::kMultiply:
      return ReductionKind::kProduct;
    case Opcode::kMinimum:
      return ReductionKind::kMin;
    case Opcode::kMaximum:
      return ReductionKind::kMax;
    case Opcode::kAnd:
      return pred ? std::optional(ReductionKind::kMin) : std::nullopt;
    case Opcode::kOr:
      return pred ? std::optional(ReductionKind::kMax) : std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<ReductionKind> MatchReductionComputation(const Computation* computation) {
  if (computation == nullptr || computation->num_parameters() != 2) return std::nullopt;
  const Instruction* root = computation->root_instruction();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  std::optional<ReductionKind> kind = MatchReductionInstruction(*root);
  if (!kind) return std::nullopt;
  const Instruction* p0 = computation->parameter_instruction(0);
  const Instruction* p1 = computation->parameter_instruction(1);
  const bool in_order = root->operand(0) == p0 && root->operand(1) == p1;
  const bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  return in_order || swapped ? kind : std::nullopt;
}

absl::StatusOr<std::optional<CollectiveKey>> GetCollectiveKey(const Instruction& instruction) {
  std::optional<ReductionKind> kind = MatchReductionComputation(instruction.to_apply());
  if (!kind) return std::optional<CollectiveKey>();
  HLOGYM_ASSIGN(groups, GetReplicaGroups(instruction));
  return std::optional<CollectiveKey>(
      CollectiveKey{*kind, instruction.shape().element_type(), HasChannelId(instruction),
                    UsesGlobalDeviceIds(instruction), std::move(groups)});
}

}  // namespace hlogym
