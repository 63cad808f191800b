// reduce-scatter-creator: XLA's ReduceScatterCreator (GPU compiler,
// "collective-optimizations").
//
// Implements: an array all-reduce (one operand, not constrain_layout) whose
// only user is a dynamic-slice that takes, along one dimension, shard j of
// group_size shards on the j-th device of each replica group (see
// collective_opt_utils.h for the offsets and device ids recognized) becomes a
// reduce-scatter over that dimension with the all-reduce's reducer,
// replica_groups and use_global_device_ids. When the dimension is not a
// multiple of the group size, the reduce-scatter reads a slice of the input
// covering group_size whole shards. An all-reduce with a channel_id gets a
// fresh channel_id (one above the module's largest), as in XLA. The
// dynamic-slice and the all-reduce are removed (the offset computation is
// left for dce).
// Leaves out: an intervening reshape or bitcast between the all-reduce and
// the dynamic-slice, and dynamic-slices that narrow several dimensions (XLA's
// default here does not allow several either). Fusion computations are
// skipped, as in XLA.
#ifndef HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_
#define HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_

#include "passes/pass.h"

namespace hlogym {

class ReduceScatterCreator : public Pass {
 public:
  std::string_view name() const override { return "reduce-scatter-creator"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_REDUCE_SCATTER_CREATOR_H_
