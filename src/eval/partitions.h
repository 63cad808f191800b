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
//
// A module written for several replicas (replica_count above 1, one
// partition: pmap, PyTorch/XLA's data-parallel and ZeRO steps) that holds a
// collective or replica-id runs the same way, one copy per replica, every
// collective crossing them and replica-id giving each copy its index: one
// replica cannot compute an all-gather or a reduce-scatter, whose result
// shape is not its operand's.
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

// What a partition's (or a replica's) copy knows of the others.
struct PartitionContext {
  int64_t id = 0;
  int64_t count = 1;
  PartitionRendezvous* rendezvous = nullptr;
  // The copies are replicas: replica-id (not partition-id) is `id`, and every
  // collective crosses them, with a channel_id or not.
  bool replicas = false;
};

// Whether `instruction` is a collective across partitions (one with a
// channel_id that EvalCrossPartitionCollective evaluates).
bool IsCrossPartitionCollective(const Instruction& instruction);

// Whether the collective `instruction`, in the copy `context` describes, is
// exchanged with the other copies (EvalCrossPartitionCollective): one across
// partitions, or any all-reduce, all-gather, reduce-scatter, all-to-all or
// collective-permute across replicas.
bool ExchangesAcrossCopies(const Instruction& instruction, const PartitionContext& context);

// Whether Evaluate() runs `module` one copy per partition (see above).
bool NeedsEveryPartition(const Module& module);
// Whether Evaluate() runs `module` one copy per replica (see above).
bool NeedsEveryReplica(const Module& module);

// Runs the entry computation once per partition (once per replica where
// NeedsEveryReplica) in lockstep; copy 0's result.
absl::StatusOr<Literal> EvaluatePartitions(const Module& module,
                                           const std::vector<Literal>& arguments,
                                           const EvaluatorOptions& options);

// Runs the entry computation once per partition (with `replicas`, once per
// replica) in lockstep, copy p on `arguments[p]`; every copy's result.
absl::StatusOr<std::vector<Literal>> EvaluateEachPartition(
    const Module& module, const std::vector<std::vector<Literal>>& arguments,
    const EvaluatorOptions& options, bool replicas = false);

// A cross-partition collective (with a channel_id) of partition `context.id`
// (or any collective of a replica's copy), on its `operand`: exchanges it and
// combines every copy's as the collective does over its group
// (replica_groups of copy ids, or all). `shape`: the result's, where it is
// not the instruction's (one element of a variadic collective).
absl::StatusOr<ValuePtr> EvalCrossPartitionCollective(const Instruction& instruction,
                                                      const ValuePtr& operand,
                                                      const PartitionContext& context,
                                                      const Shape* shape = nullptr);

}  // namespace eval
}  // namespace hlogym

#endif  // HLOGYM_EVAL_PARTITIONS_H_
