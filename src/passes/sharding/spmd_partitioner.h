// spmd-partitioning: XLA's SPMD partitioner (StatefulRngSpmdPartitioner, as
// the CPU compiler runs it after shardy-xla for a module compiled for more
// than one partition), for the programs whose work is all manual: shard_map
// (today's jax.pmap is one) in either of the forms JAX writes it:
//   - Shardy's: entry parameters tiled by a `sharding`, turned into
//     per-device values by a custom call "xla.sdy.GlobalToLocalShape", the
//     body called as "xla.sdy.manual_computation_body", its results turned
//     back by "xla.sdy.LocalToGlobalShape" (and "xla.sdy.FuncResultSharding");
//   - GSPMD's: "Sharding" custom calls, then "SPMDFullToShardShape", the body
//     inline with sharding={manual}, then "SPMDShardToFullShape".
//
// Implements: every entry value outside the manual part takes its
// per-partition shape (each dimension divided by its tile count, rounded up,
// as XLA pads an uneven shard); the shape-changing custom calls become copies
// of their (now per-partition) operands, as XLA's partitioner leaves them;
// entry_computation_layout follows. The manual part is left as it is. Runs
// only where NumPartitions(module) > 1 (XLA runs sharding-remover instead
// otherwise). Reports "changed" exactly when it rewrote the module.
// Leaves out: everything that needs sharding propagation or collectives
// inserted (an entry instruction that is neither manual nor one of the above:
// the module is left unchanged and CheckSpmdPartitioning says which
// instruction), tuple-shaped parameters, maximal shardings.
#ifndef HLOGYM_PASSES_SHARDING_SPMD_PARTITIONER_H_
#define HLOGYM_PASSES_SHARDING_SPMD_PARTITIONER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "passes/pass.h"

namespace hlogym {

// OK where spmd-partitioning can partition `module` (compiled for more than
// one partition, all of its work manual); otherwise why not, naming the first
// entry instruction it cannot partition.
absl::Status CheckSpmdPartitioning(const Module& module);

// For a module CheckSpmdPartitioning accepts: where the split follows hlogym's
// model of a choice Shardy's propagation makes, so that XLA's split may differ
// (DataParallelInferences); empty where none does.
std::string SpmdPartitioningInferences(const Module& module);

// `original` as the default pipeline splits it for its partitions (after the
// call-inliner), where that changes its parameters' shapes; null where it
// does not (one partition, nothing to split, or nothing spmd-partitioning
// models).
std::unique_ptr<Module> SplitForPartitions(const Module& original);

// SplitForPartitions(original) where `optimized` takes the per-partition
// parameters that split gives: what an optimized module compiled for several
// partitions is checked against. Null where that is not so (the two modules
// are compared as they are).
std::unique_ptr<Module> PartitionedToMatch(const Module& original, const Module& optimized);

// Whether `split` (SplitForPartitions(original) where null: what
// spmd-partitioning makes of it; or a module optimized from that, with the
// same parameters) computes what `original` computes:
// the original run whole on seeded random inputs, the split run with every
// partition's copy (eval/partitions.h) on its part of them (a parameter split
// along a dimension gets its partition's slice, a whole one all of it), and
// each partition's outputs compared with the original's (with its slice of a
// split output), as the equivalence check compares. OK where they agree;
// FailedPrecondition naming the first difference; Unimplemented where there
// is nothing to check this way (nothing splits, or the original itself needs
// every partition: a shard_map's manual collectives).
absl::Status CheckSplitAgainstWhole(const Module& original, const Module* split = nullptr,
                                    uint64_t seed = 0);

class SpmdPartitioner : public Pass {
 public:
  std::string_view name() const override { return "spmd-partitioning"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_SPMD_PARTITIONER_H_
