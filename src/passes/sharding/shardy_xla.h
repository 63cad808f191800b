// shardy-xla: XLA's ShardyXLA pass as the CPU compiler runs it for a single
// partition (in "sharding-removal", constructed with
// runSdyShardingPropagation=false; jax enables the Shardy partitioner by
// default, so XLA runs it).
//
// Implements what that configuration does to a module without the
// "xla.sdy.use_tuple_args" module frontend attribute, i.e. to every module
// JAX produces for CPU: each call whose callee's name contains
// "xla.sdy.manual_computation_body" (a shard_map body) and that carries the
// frontend attribute inlineable loses that attribute, and its callee is
// renamed to a fresh "inlineable_callee" name (XLA does so, that the
// call-inliner, which refuses manual-computation bodies by name, inlines it).
// The name is read when the call is visited, so a second call to an already
// renamed callee keeps its attribute, as in XLA. Reports "changed" exactly
// when it renamed something. A module carrying no Shardy attributes or
// custom calls is left unchanged, as XLA leaves it.
// Leaves out: the rest of ShardyXLA, out of scope for hlogym: the MLIR
// round trip (HLO -> StableHLO + sdy -> HLO) that XLA performs in this
// configuration only when the module has "xla.sdy.use_tuple_args" (it would
// flatten the entry parameters into one tuple, turn the round-tripped
// xla.sdy.* frontend attributes and custom calls back into HLO shardings and
// drop the xla.sdy.* module attributes); such a module is left as it is
// apart from the rewrite above. Shardy sharding propagation (the
// multi-partition configuration) is not implemented; for several partitions
// xla-cpu-default runs spmd-partitioning instead, which splits shard_map's
// manual programs (spmd_partitioner.h).
#ifndef HLOGYM_PASSES_SHARDING_SHARDY_XLA_H_
#define HLOGYM_PASSES_SHARDING_SHARDY_XLA_H_

#include "passes/pass.h"

namespace hlogym {

// A shard_map body as Shardy's export names it ("xla.sdy.manual_computation_body"):
// XLA's call-inliner leaves calls to it alone until shardy-xla (one partition)
// or the SPMD partitioner (several) renames it.
bool IsShardyManualComputationBody(const Computation& computation);

class ShardyXla : public Pass {
 public:
  std::string_view name() const override { return "shardy-xla"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_SHARDY_XLA_H_
