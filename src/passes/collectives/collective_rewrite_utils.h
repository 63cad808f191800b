// Helpers shared by the collective rewrites (all-reduce-simp,
// all-reduce-folder, all-reduce-reassociate, reduce-scatter-reassociate,
// all-gather-optimizer, all-gather-bcast-reorder): the collective attributes
// hlogym keeps verbatim (replica_groups, channel_id, use_global_device_ids,
// constrain_layout; replica groups are read with hlo/replica_groups.h), the
// module's replica_count / num_partitions header fields, and the reduction
// kind of a to_apply computation.
#ifndef HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_REWRITE_UTILS_H_
#define HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_REWRITE_UTILS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/replica_groups.h"

namespace hlogym {

bool HasChannelId(const Instruction& instruction);
bool UsesGlobalDeviceIds(const Instruction& instruction);
bool HasConstrainedLayout(const Instruction& instruction);
// Whether some instruction of `opcode` in the module has
// constrain_layout=true.
bool ModuleHasConstrainedLayout(const Module& module, Opcode opcode);
// One more than the largest channel_id in the module (1 when there is none).
int64_t NextChannelId(const Module& module);
void SetChannelId(Instruction& instruction, int64_t channel_id);

enum class ReductionKind { kSum, kProduct, kMin, kMax };
// add, multiply, minimum, maximum; and / or of pred as min / max.
std::optional<ReductionKind> MatchReductionInstruction(const Instruction& instruction);
// The kind of a to_apply computation whose root is such an op of its two
// parameters (in either order).
std::optional<ReductionKind> MatchReductionComputation(const Computation* computation);

// XLA's AllReduceKey for an all-reduce or reduce-scatter (domain left out):
// reduction kind, element type, whether it has a channel id,
// use_global_device_ids and the replica groups. Nullopt when to_apply is not
// a reduction.
struct CollectiveKey {
  ReductionKind kind;
  PrimitiveType element_type;
  bool has_channel_id;
  bool use_global_device_ids;
  ReplicaGroupList groups;
  bool operator==(const CollectiveKey&) const = default;
};
absl::StatusOr<std::optional<CollectiveKey>> GetCollectiveKey(const Instruction& instruction);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_REWRITE_UTILS_H_
