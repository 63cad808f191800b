// Reading and writing a collective's replica groups (and XLA's iota device
// lists), for the passes that rewrite collectives and the evaluator that runs
// them across partitions or replicas.
#ifndef HLOGYM_HLO_REPLICA_GROUPS_H_
#define HLOGYM_HLO_REPLICA_GROUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/instruction.h"

namespace hlogym {

using ReplicaGroupList = std::vector<std::vector<int64_t>>;

// The instruction's replica groups: empty when `replica_groups` is absent or
// `{}`; the list form `{{0,1},{2,3}}` and the iota form
// `[G,S]<=[d0,d1,...]T(p0,p1,...)` are read. Malformed text is an error
// naming the instruction.
absl::StatusOr<ReplicaGroupList> GetReplicaGroups(const Instruction& instruction);
// The same from the attribute's text (also collective-permute's
// source_target_pairs, `{{0,1},{1,2}}`); nullopt where malformed.
std::optional<ReplicaGroupList> ParseReplicaGroups(std::string_view text);
// `{{0,1},{2,3}}`.
std::string FormatReplicaGroups(const ReplicaGroupList& groups);
// The device list an iota tile assignment or replica-group list writes,
// `<=[d0,d1,...]T(p0,p1,...)`: the row-major iota of [d0,d1,...], transposed
// by the permutation where one is written, flattened; nullopt where malformed.
std::optional<std::vector<int64_t>> ParseIotaList(std::string_view text);

}  // namespace hlogym

#endif  // HLOGYM_HLO_REPLICA_GROUPS_H_
