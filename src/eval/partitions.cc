#include "eval/partitions.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"
#include "eval/interpreter.h"
#include "hlo/computation.h"
#include "hlo/query.h"
#include "hlo/replica_groups.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {

PartitionRendezvous::PartitionRendezvous(int64_t partitions)
    : partitions_(partitions), next_round_(partitions, 0), finished_(partitions, false) {}

absl::StatusOr<std::vector<ValuePtr>> PartitionRendezvous::Exchange(int64_t id, ValuePtr operand) {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t index = next_round_[id]++;
  Round& round = rounds_[index];
  if (round.operands.empty()) round.operands.resize(partitions_);
  round.operands[id] = std::move(operand);
  ++round.arrived;
  changed_.notify_all();
  // Every partition arrives, or one that has not ends first.
  auto ready = [&] {
    if (rounds_[index].arrived == partitions_) return true;
    for (int64_t p = 0; p < partitions_; ++p) {
      if (finished_[p] && next_round_[p] <= index) return true;
    }
    return false;
  };
  changed_.wait(lock, ready);
  Round& done = rounds_[index];
  if (done.arrived != partitions_) {
    return absl::FailedPreconditionError(
        "a partition ended before reaching a collective the others ran (the partitions' copies "
        "took different paths)");
  }
  std::vector<ValuePtr> operands = done.operands;
  if (++done.taken == partitions_) rounds_.erase(index);
  return operands;
}

void PartitionRendezvous::Finish(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_[id] = true;
  changed_.notify_all();
}

namespace {

// The partitions of `id`'s group, in group order.
absl::StatusOr<std::vector<int64_t>> GroupOf(const Instruction& instruction, int64_t id,
                                             int64_t count) {
  std::vector<int64_t> everyone(count);
  for (int64_t p = 0; p < count; ++p) everyone[p] = p;
  HLOGYM_ASSIGN(groups, GetReplicaGroups(instruction));
  if (groups.empty() || (groups.size() == 1 && groups.front().empty())) return everyone;
  for (const std::vector<int64_t>& group : groups) {
    if (std::find(group.begin(), group.end(), id) != group.end()) return group;
  }
  return absl::InvalidArgumentError(absl::StrCat("partition ", id, " is in no replica group"));
}

// Combines `values` elementwise with the reducer `computation` (a binary
// operation of its two parameters).
absl::StatusOr<ValuePtr> Reduce(const Computation& reducer, const std::vector<ValuePtr>& values) {
  const Instruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter) {
    return absl::UnimplementedError("an all-reduce whose reducer is not one binary operation");
  }
  const Shape& shape = values.front()->shape;
  std::shared_ptr<Value> sum = NewArray(shape);
  if (sum->size_bytes > 0) std::memcpy(sum->bytes(), values.front()->bytes(), sum->size_bytes);
  for (size_t i = 1; i < values.size(); ++i) {
    if (!ApplyBinary(root->opcode(), shape.element_type(), sum->bytes(), values[i]->bytes(),
                     sum->bytes(), shape.ElementCount())) {
      return absl::UnimplementedError(absl::StrCat("an all-reduce with ", OpName(root->opcode()),
                                                   " over ", TypeName(shape.element_type())));
    }
  }
  return ValuePtr(std::move(sum));
}

// `parts` joined along `dim` (each part's extent there may differ).
ValuePtr Concatenate(const std::vector<ValuePtr>& parts, const Shape& shape, int64_t dim) {
  std::shared_ptr<Value> out = NewArray(shape);
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions(d);
  int64_t out_row = out->size_bytes / std::max<int64_t>(outer, 1);
  int64_t offset = 0;
  for (const ValuePtr& part : parts) {
    const int64_t row = part->size_bytes / std::max<int64_t>(outer, 1);
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out->bytes() + o * out_row + offset, part->bytes() + o * row, row);
    }
    offset += row;
  }
  return out;
}

// The `index`-th of `pieces` equal slices of `value` along `dim`.
ValuePtr SliceAlong(const ValuePtr& value, const Shape& shape, int64_t dim, int64_t index) {
  std::shared_ptr<Value> out = NewArray(shape);
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dimensions(d);
  const int64_t out_row = out->size_bytes / std::max<int64_t>(outer, 1);
  const int64_t in_row = value->size_bytes / std::max<int64_t>(outer, 1);
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(out->bytes() + o * out_row, value->bytes() + o * in_row + index * out_row, out_row);
  }
  return out;
}

// `literal` with every array's elements rotated by `places` (row-major).
Literal Rotated(const Literal& literal, int64_t places) {
  if (literal.shape().IsTuple()) {
    std::vector<Literal> elements;
    for (const Literal& element : literal.tuple_elements()) {
      elements.push_back(Rotated(element, places));
    }
    return Literal::Tuple(literal.shape(), std::move(elements));
  }
  if (!literal.shape().IsArray() || literal.element_count() < 2) return literal;
  Literal out = literal;
  const int64_t n = literal.element_count();
  for (int64_t i = 0; i < n; ++i) out.SetBits((i + places) % n, literal.GetBits(i));
  return out;
}

}  // namespace

bool IsCrossPartitionCollective(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:  // its done hands the reduced value on
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kCollectivePermute:
      return instruction.attrs().FindRaw("channel_id") != nullptr;
    case Opcode::kAllToAll:  // one operand split along a dimension, or one operand per member
      return instruction.attrs().FindRaw("channel_id") != nullptr &&
             (instruction.attrs().dimensions.size() == 1 || instruction.shape().IsTuple());
    default:
      return false;
  }
}

bool ExchangesAcrossCopies(const Instruction& instruction, const PartitionContext& context) {
  if (!context.replicas) return IsCrossPartitionCollective(instruction);
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kCollectivePermute:
      return true;
    case Opcode::kAllToAll:
      return instruction.attrs().dimensions.size() == 1 || instruction.shape().IsTuple();
    default:
      return false;
  }
}

bool NeedsEveryReplica(const Module& module) {
  if (ReplicaCount(module) <= 1 || NumPartitions(module) > 1) return false;
  const PartitionContext replica{.replicas = true};
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kReplicaId ||
          ExchangesAcrossCopies(*instruction, replica)) {
        return true;
      }
    }
  }
  return false;
}

bool NeedsEveryPartition(const Module& module) {
  if (NumPartitions(module) <= 1) return false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kPartitionId ||
          IsCrossPartitionCollective(*instruction)) {
        return true;
      }
    }
  }
  return false;
}

absl::StatusOr<std::vector<Literal>> EvaluateEachPartition(
    const Module& module, const std::vector<std::vector<Literal>>& arguments,
    const EvaluatorOptions& options, bool replicas) {
  const int64_t count = static_cast<int64_t>(arguments.size());
  PartitionRendezvous rendezvous(count);
  std::vector<PartitionContext> contexts(count);
  std::vector<absl::StatusOr<Literal>> results(count, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < count; ++p) {
    contexts[p] = {p, count, &rendezvous, replicas};
    threads.emplace_back([&, p] {
      EvaluatorOptions partition_options = options;
      partition_options.partition = &contexts[p];
      partition_options.num_threads = 1;
      results[p] =
          EvaluateComputation(*module.entry_computation(), arguments[p], partition_options);
      rendezvous.Finish(p);
    });
  }
  for (std::thread& thread : threads) thread.join();
  // A partition's own failure explains more than another's wait for it.
  for (const absl::StatusOr<Literal>& result : results) {
    if (!result.ok() && !absl::IsFailedPrecondition(result.status())) return result.status();
  }
  std::vector<Literal> literals;
  for (absl::StatusOr<Literal>& result : results) {
    if (!result.ok()) return result.status();
    literals.push_back(*std::move(result));
  }
  return literals;
}

absl::StatusOr<Literal> EvaluatePartitions(const Module& module,
                                           const std::vector<Literal>& arguments,
                                           const EvaluatorOptions& options) {
  const bool replicas = NeedsEveryReplica(module);
  std::vector<std::vector<Literal>> each(replicas ? ReplicaCount(module) : NumPartitions(module));
  for (int64_t p = 0; p < std::ssize(each); ++p) {
    for (const Literal& argument : arguments) each[p].push_back(Rotated(argument, p));
  }
  HLOGYM_ASSIGN(results, EvaluateEachPartition(module, each, options, replicas));
  return std::move(results.front());
}

absl::StatusOr<ValuePtr> EvalCrossPartitionCollective(const Instruction& instruction,
                                                      const ValuePtr& operand,
                                                      const PartitionContext& context,
                                                      const Shape* result_shape) {
  HLOGYM_ASSIGN(everyone, context.rendezvous->Exchange(context.id, operand));
  HLOGYM_ASSIGN(group, GroupOf(instruction, context.id, context.count));
  std::vector<ValuePtr> members;
  for (int64_t p : group) {
    if (p < 0 || p >= context.count) {
      return absl::InvalidArgumentError(absl::StrCat("partition ", p, " out of range"));
    }
    members.push_back(everyone[p]);
  }
  const int64_t rank_in_group = std::find(group.begin(), group.end(), context.id) - group.begin();
  const Shape& shape = result_shape != nullptr ? *result_shape : instruction.shape();
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return Reduce(*instruction.called_computations()[0], members);
    case Opcode::kAllGather:
      return Concatenate(members, shape, instruction.attrs().dimensions.at(0));
    case Opcode::kReduceScatter: {
      HLOGYM_ASSIGN(sum, Reduce(*instruction.called_computations()[0], members));
      return SliceAlong(sum, shape, instruction.attrs().dimensions.at(0), rank_in_group);
    }
    case Opcode::kAllToAll: {
      if (shape.IsTuple()) {
        // One operand per member (the operands arrive as a tuple): member i
        // gets operand i, and result j is what member j sent to this one.
        if (shape.tuple_shapes_size() != static_cast<int64_t>(members.size())) {
          return absl::InvalidArgumentError(absl::StrCat("all-to-all: ", shape.tuple_shapes_size(),
                                                         " results for ", members.size(),
                                                         " members of its group"));
        }
        std::vector<ValuePtr> received;
        for (const ValuePtr& member : members) {
          if (static_cast<int64_t>(member->elements.size()) <= rank_in_group) {
            return absl::InvalidArgumentError("all-to-all: a member sent too few operands");
          }
          received.push_back(member->elements[rank_in_group]);
        }
        return MakeTuple(shape, std::move(received));
      }
      // Each member splits its operand along the dimension into one part per
      // member and sends part i to member i; the parts received are joined
      // along the same dimension in the group's order.
      const int64_t dim = instruction.attrs().dimensions.at(0);
      const int64_t size = shape.dimensions(dim);
      const int64_t parts = static_cast<int64_t>(members.size());
      if (size % parts != 0) {
        return absl::InvalidArgumentError(absl::StrCat("all-to-all: dimension ", dim, " (", size,
                                                       ") does not split into ", parts, " parts"));
      }
      Shape part_shape = shape;
      part_shape.mutable_dimensions()[dim] = size / parts;
      std::vector<ValuePtr> received;
      for (const ValuePtr& member : members) {
        received.push_back(SliceAlong(member, part_shape, dim, rank_in_group));
      }
      return Concatenate(received, shape, dim);
    }
    case Opcode::kCollectivePermute: {
      const RawAttribute* pairs = instruction.attrs().FindRaw("source_target_pairs");
      std::optional<ReplicaGroupList> parsed =
          pairs ? ParseReplicaGroups(pairs->value) : std::nullopt;
      if (!parsed) return absl::UnimplementedError("collective-permute without readable pairs");
      for (const std::vector<int64_t>& pair : *parsed) {
        if (pair.size() == 2 && pair[1] == context.id && pair[0] >= 0 && pair[0] < context.count) {
          return everyone[pair[0]];
        }
      }
      std::shared_ptr<Value> zeros = NewArray(shape);
      if (zeros->size_bytes > 0) std::memset(zeros->bytes(), 0, zeros->size_bytes);
      return ValuePtr(std::move(zeros));
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat(OpName(instruction.opcode()), " across partitions"));
  }
}

}  // namespace hlogym::eval
