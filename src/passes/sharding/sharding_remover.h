// sharding-remover: XLA's ShardingRemover (single-partition programs).
//
// Implements: custom calls "Sharding", "SPMDFullToShardShape",
// "SPMDShardToFullShape" and "xla.sdy.FuncResultSharding" are bypassed (their
// users, and the root, use their operand instead); the "Sharding" and
// "xla.sdy.FuncResultSharding" ones are then replaced by a dead copy of the
// operand, as XLA does so a later dce removes them; "xla.sdy.ShardingGroup"
// custom calls are removed. Reports "changed" whenever it rewrote anything
// (XLA does not for the ShardingGroup removal alone).
// Leaves out: nothing else (sharding attributes on instructions stay, as in
// XLA). A module compiled for several partitions is left alone: XLA runs the
// SPMD partitioner on it instead (spmd-partitioning), and bypassing its
// shard_map boundaries would leave values of the wrong shape.
#ifndef HLOGYM_PASSES_SHARDING_SHARDING_REMOVER_H_
#define HLOGYM_PASSES_SHARDING_SHARDING_REMOVER_H_

#include "passes/pass.h"

namespace hlogym {

class ShardingRemover : public Pass {
 public:
  std::string_view name() const override { return "sharding-remover"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_SHARDING_REMOVER_H_
