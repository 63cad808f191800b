// Evaluating a module split for several partitions the way its devices run
// it: one copy per partition, each in a thread of its own, exchanging the
// operands of their cross-partition collectives (those with a channel_id:
// all-reduce, all-gather, reduce-scatter, collective-permute) through a
// rendezvous, partition-id giving each copy its own index.
//
// Evaluate() does this by itself for a module whose header says
// num_partitions above 1 and which holds such a collective or partition-id;
// partition 0 gets the arguments given, partition p the same arrays with
// their elements rotated by p places (different data on every partition,
// the same on both sides of an equivalence check), and the result is
// partition 0's. Collectives without a channel_id are cross-replica, over
// one replica: they return their operand, as before.
#ifndef HLOGYM_EVAL_PARTITIONS_H_
#define HLOGYM_EVAL_PARTITIONS_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "eval/value.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

struct EvaluatorOptions;

namespace eval {

// Where every partition's copy hands its collective's operand and receives
// all of them: the k-th collective each copy runs meets the k-th of the
// others (SPMD copies run the same collectives in the same order).
class PartitionRendezvous {
 public:
  explicit PartitionRendezvous(int64_t partitions);
  // Partition `id`'s operand of its next collective; every partition's, in
  // partition order, once all have arrived. Fails where another partition has
  // ended without reaching it.
  absl::StatusOr<std::vector<ValuePtr>> Exchange(int64_t id, ValuePtr operand);
  // Partition `id` has run to its end (or failed): no more collectives.
  void Finish(int64_t id);

 private:
  struct Round {
    std::vector<ValuePtr> operands;
    int64_t arrived = 0;
    int64_t taken = 0;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  const int64_t partitions_;
  std::vector<int64_t> next_round_;  // per partition
  std::vector<bool> finished_;
  absl::flat_hash_map<int64_t, Round> rounds_;
};

// What a partition's copy knows of the others.
struct PartitionContext {
  int64_t id = 0;
  int64_t count = 1;
  PartitionRendezvous* rendezvous = nullptr;
};

// Whether `instruction` is a collective across partitions (one with a
// channel_id that EvalCrossPartitionCollective evaluates).
bool IsCrossPartitionCollective(const Instruction& instruction);

// Whether Evaluate() runs `module` one copy per partition (see above).
bool NeedsEveryPartition(const Module& module);

// Runs the entry computation once per partition in lockstep; partition 0's
// result.
absl::StatusOr<Literal> EvaluatePartitions(const Module& module,
                                           const std::vector<Literal>& arguments,
                                           const EvaluatorOptions& options);

// Runs the entry computation once per partition in lockstep, partition p on
// `arguments[p]`; every partition's result.
absl::StatusOr<std::vector<Literal>> EvaluateEachPartition(
    const Module& module, const std::vector<std::vector<Literal>>& arguments,
    const EvaluatorOptions& options);

// A cross-partition collective (with a channel_id) of partition `context.id`,
// on its `operand`: exchanges it and combines every partition's as the
// collective does over its group (replica_groups of partition ids, or all).
absl::StatusOr<ValuePtr> EvalCrossPartitionCollective(const Instruction& instruction,
                                                      const ValuePtr& operand,
                                                      const PartitionContext& context);

}  // namespace eval
}  // namespace hlogym

#endif  // HLOGYM_EVAL_PARTITIONS_H_
