#include "passes/collectives/all_reduce_folder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

absl::Status BadGroups(const Instruction& instruction, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("all-reduce-folder: ", instruction.name(), ": ", why));
}

// The folded groups of `inner` then `outer`, or nullopt when they do not
// fold into one all-reduce.
absl::StatusOr<std::optional<ReplicaGroupList>> Fold(const Instruction& outer,
                                                     const ReplicaGroupList& inner,
                                                     const ReplicaGroupList& groups) {
  int64_t replicas = 0;
  for (const auto& group : inner) {
    for (int64_t id : group) replicas = std::max(replicas, id + 1);
  }
  std::vector<int64_t> inner_group(replicas, -1);
  for (size_t g = 0; g < inner.size(); ++g) {
    for (int64_t id : inner[g]) inner_group[id] = static_cast<int64_t>(g);
  }
  // For each distinct contributor set, its id; for each replica, the id of
  // the set its result sums.
  std::map<std::vector<bool>, int64_t> set_ids;
  std::vector<int64_t> replica_set(replicas, 0);
  for (const auto& group : groups) {
    std::vector<bool> contributors(replicas, false);
    for (int64_t id : group) {
      if (id < 0 || id >= replicas || inner_group[id] < 0) {
        return BadGroups(
            outer, absl::StrCat("replica ", id, " is not in the operand all-reduce's groups"));
      }
      for (int64_t contributor : inner[inner_group[id]]) {
        if (contributors[contributor]) return std::optional<ReplicaGroupList>();
        contributors[contributor] = true;
      }
    }
    auto [it, inserted] = set_ids.emplace(contributors, static_cast<int64_t>(set_ids.size()) + 1);
    for (int64_t id : group) replica_set[id] = it->second;
  }
  ReplicaGroupList folded;
  for (const auto& [contributors, id] : set_ids) {
    std::vector<int64_t> group;
    for (int64_t replica = 0; replica < replicas; ++replica) {
      if (!contributors[replica]) continue;
      if (replica_set[replica] != id) return std::optional<ReplicaGroupList>();
      group.push_back(replica);
    }
    if (group.empty()) return std::optional<ReplicaGroupList>();
    folded.push_back(std::move(group));
  }
  std::sort(folded.begin(), folded.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return std::optional<ReplicaGroupList>(std::move(folded));
}

}  // namespace

bool AllReduceFolder::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllReduce});
}

absl::StatusOr<bool> AllReduceFolder::Run(Module& module) {
  if (ModuleHasConstrainedLayout(module, Opcode::kAllReduce)) return false;
  int64_t next_channel_id = NextChannelId(module);
  bool changed = false;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* outer : computation->MakeInstructionPostOrder()) {
      if (outer->opcode() != Opcode::kAllReduce || outer->operand_count() != 1 ||
          outer->operand(0)->opcode() != Opcode::kAllReduce) {
        continue;
      }
      Instruction* inner = outer->operand(0);
      if (inner->user_count() != 1 || inner->IsRoot()) continue;
      HLOGYM_ASSIGN(inner_key, GetCollectiveKey(*inner));
      HLOGYM_ASSIGN(outer_key, GetCollectiveKey(*outer));
      if (!inner_key || !outer_key || inner_key->groups.empty() || outer_key->groups.empty()) {
        continue;
      }
      if (inner_key->kind != outer_key->kind ||
          inner_key->element_type != outer_key->element_type ||
          inner_key->has_channel_id != outer_key->has_channel_id ||
          inner_key->use_global_device_ids != outer_key->use_global_device_ids) {
        continue;
      }
      HLOGYM_ASSIGN(folded, Fold(*outer, inner_key->groups, outer_key->groups));
      if (!folded) continue;
      auto merged = std::make_unique<Instruction>(Opcode::kAllReduce, inner->shape());
      for (Instruction* operand : inner->operands()) merged->AppendOperand(operand);
      merged->mutable_called_computations() = {inner->to_apply()};
      InstructionAttributes& attrs = merged->mutable_attrs();
      attrs.SetRaw("replica_groups", FormatReplicaGroups(*folded));
      if (inner_key->has_channel_id) attrs.SetRaw("channel_id", std::to_string(next_channel_id++));
      if (inner_key->use_global_device_ids) attrs.SetRaw("use_global_device_ids", "true");
      Instruction* added = computation->AddInstruction(std::move(merged));
      HLOGYM_RETURN_IF_ERROR(outer->ReplaceAllUsesWith(added));
      HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(outer));
      HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(inner));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlogym
