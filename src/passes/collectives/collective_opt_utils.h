// The match of "collective feeding a dynamic-slice at this device's shard",
// the core of XLA's collective_opt_utils, shared by reduce-scatter-creator and
// all-gather-dynamic-slice-simplifier (collective attributes and header fields
// are read with collective_rewrite_utils.h).
//
// The dynamic-slice match covers one split dimension without an intervening
// reshape or bitcast; its offset may be the device id itself, a multiply by a
// constant, a reshape/bitcast/copy, a widening integer convert, a clamp to
// [0, >= last offset], or a lookup (dynamic-slice of an s32/u32 constant or
// iota table, recursively indexed). Device ids: replica-id for cross-replica
// collectives (no channel_id), partition-id for cross-partition ones without
// global ids (each replica group a single replica), and, with
// use_global_device_ids, replica-id when there is one partition, partition-id
// when there is one replica or the groups are orthogonal to replicas, or
// partition-id + replica-id * num_partitions.
#ifndef HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_OPT_UTILS_H_
#define HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_OPT_UTILS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

struct DynamicSliceSpec {
  Instruction* dynamic_slice = nullptr;
  int64_t split_dim = -1;  // in the collective's shape
  int64_t group_size = 0;  // devices per group
};

// The dynamic-slice that is the only user of the array-shaped `collective`
// (an all-reduce or all-gather) and takes, on exactly one dimension, shard j
// of group_size shards for the j-th device of each group.
std::optional<DynamicSliceSpec> MatchDynamicSliceOfCollective(const Instruction* collective);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_COLLECTIVE_OPT_UTILS_H_
