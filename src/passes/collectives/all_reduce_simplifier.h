// all-reduce-simp: XLA's AllReduceSimplifier.
//
// Implements, in every computation:
//   - an all-gather or reduce-scatter whose first operand's shape is
//     compatible with its result (a single participant) becomes that operand;
//     the same for an async-start / async-done pair wrapping one (the
//     async-done is replaced by the async-start's first operand);
//   - an array-shaped all-reduce (not all-reduce-start/-done) whose groups all
//     have one participant becomes its operand. Participants per group follow
//     XLA's group modes: without channel_id the group size (replica_count when
//     there are no groups); with channel_id and no use_global_device_ids the
//     group size (or replica_count) times num_partitions; with
//     use_global_device_ids the group size. An all-reduce with channel_id is
//     only touched when the header says use_spmd_partitioning=true, as XLA;
//   - a cross-replica all-reduce (no channel_id) with equal-sized groups of
//     more than one replica whose operand is the same on every replica: a sum
//     becomes operand * group size (converted and broadcast), min/max/and/or
//     become the operand (to_apply must be exactly two parameters and one op).
// Leaves out: XLA's full HloReplicationAnalysis. An operand counts as
// replicated only when it is a constant or iota, an entry parameter marked
// parameter_replication={true}, a cross-replica all-reduce over all replicas
// (no groups), or an elementwise / broadcast / reshape / transpose / convert /
// slice / copy of replicated values. Tuple-shaped all-reduces are kept, as in
// XLA. All-to-all is not simplified (XLA's pass does not either).
// Errors: unreadable replica_groups, naming the instruction.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class AllReduceSimplifier : public Pass {
 public:
  std::string_view name() const override { return "all-reduce-simp"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_SIMPLIFIER_H_
