#include "passes/collectives/all_reduce_simplifier.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool IsGatherOrScatterNoOp(const Instruction& instruction) {
  return (instruction.opcode() == Opcode::kAllGather ||
          instruction.opcode() == Opcode::kReduceScatter) &&
         instruction.operand_count() >= 1 &&
         instruction.shape().Compatible(instruction.operand(0)->shape());
}

// A small stand-in for XLA's replication analysis: true when `instruction`
// certainly has the same value on every replica.
class Replication {
 public:
  bool IsReplicated(const Instruction* instruction) {
    auto it = memo_.find(instruction);
    if (it != memo_.end()) return it->second;
    memo_[instruction] = false;  // cycles cannot occur; this guards depth
    bool replicated = Compute(instruction);
    memo_[instruction] = replicated;
    return replicated;
  }

 private:
  bool Compute(const Instruction* instruction) {
    switch (instruction->opcode()) {
      case Opcode::kConstant:
      case Opcode::kIota:
        return true;
      case Opcode::kParameter: {
        if (!instruction->parent()->IsEntry()) return false;
        const RawAttribute* attr = instruction->attrs().FindRaw("parameter_replication");
        return attr != nullptr && attr->value == "{true}";
      }
      case Opcode::kAllReduce: {
        if (HasChannelId(*instruction)) return false;
        const RawAttribute* groups = instruction->attrs().FindRaw("replica_groups");
        return groups == nullptr || groups->value == "{}";
      }
      case Opcode::kBroadcast:
      case Opcode::kReshape:
      case Opcode::kTranspose:
      case Opcode::kConvert:
      case Opcode::kSlice:
      case Opcode::kCopy:
        break;
      default:
        if (!IsElementwise(instruction->opcode())) return false;
        break;
    }
    if (instruction->HasSideEffect() || !instruction->called_computations().empty()) {
      return false;
    }
    for (const Instruction* operand : instruction->operands()) {
      if (!IsReplicated(operand)) return false;
    }
    return true;
  }

  absl::flat_hash_map<const Instruction*, bool> memo_;
};

// Participants per group when every group has the same count; nullopt when
// they differ or cannot be known.
absl::StatusOr<std::optional<int64_t>> UniformParticipants(const Instruction& all_reduce) {
  HLOGYM_ASSIGN(groups, GetReplicaGroups(all_reduce));
  const Module& module = *all_reduce.parent()->parent();
  const int64_t replicas = ReplicaCount(module);
  const int64_t partitions = NumPartitions(module);
  const bool channel = HasChannelId(all_reduce);
  const bool global_ids = UsesGlobalDeviceIds(all_reduce);
  if (channel && global_ids && groups.empty()) return std::optional<int64_t>();
  int64_t multiplier = channel && !global_ids ? partitions : 1;
  if (groups.empty()) return std::optional<int64_t>(replicas * multiplier);
  for (const auto& group : groups) {
    if (group.size() != groups[0].size()) return std::optional<int64_t>();
  }
  return std::optional<int64_t>(static_cast<int64_t>(groups[0].size()) * multiplier);
}

// Replaces the async-done of `start` by the start's first operand and drops
// the start (and any async-update) once dead.
absl::Status RemoveAsyncPair(Instruction* start) {
  Instruction* done = start;
  while (done != nullptr && done->opcode() != Opcode::kAsyncDone) {
    Instruction* next = nullptr;
    for (Instruction* user : done->users()) {
      if (user->opcode() == Opcode::kAsyncDone || user->opcode() == Opcode::kAsyncUpdate) {
        next = user;
        break;
      }
    }
    done = next;
  }
  if (done == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("all-reduce-simp: ", start->name(), ": async-start without its async-done"));
  }
  Computation* computation = done->parent();
  Instruction* input = start->operand(0);
  HLOGYM_RETURN_IF_ERROR(done->ReplaceAllUsesWith(input));
  // Remove done, then the updates and start, while each is dead.
  std::vector<Instruction*> chain;
  for (Instruction* step = done; step != start; step = step->operand(0)) chain.push_back(step);
  chain.push_back(start);
  for (Instruction* step : chain) {
    if (step->user_count() != 0 || step->IsRoot()) break;
    HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(step));
  }
  (void)computation;
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> Multiplied(Instruction* all_reduce, int64_t factor) {
  Computation* computation = all_reduce->parent();
  Instruction* operand = all_reduce->operand(0);
  const Shape& shape = all_reduce->shape();
  Instruction* multiplier = MakeScalarConstant(computation, PrimitiveType::kS32,
                                               static_cast<double>(factor), shape.has_layout());
  if (shape.element_type() != PrimitiveType::kS32) {
    HLOGYM_ASSIGN(converted, MakeConvert(multiplier, shape.element_type()));
    multiplier = converted;
  }
  if (shape.rank() > 0) {
    HLOGYM_ASSIGN(broadcast, MakeBroadcast(multiplier, shape.dimensions(), {}));
    multiplier = broadcast;
  }
  return MakeBinary(Opcode::kMultiply, operand, multiplier);
}

}  // namespace

bool AllReduceSimplifier::MayChange(const Module& module) const {
  // Async-wrapped ones count through the all-gather/reduce-scatter they wrap.
  return ContainsOpcode(module, {Opcode::kAllGather, Opcode::kReduceScatter, Opcode::kAllReduce});
}

absl::StatusOr<bool> AllReduceSimplifier::Run(Module& module) {
  bool changed = false;
  // 1. Single-participant all-gather / reduce-scatter.
  // Computations wrapped by async-start are handled through their caller.
  absl::flat_hash_set<const Computation*> async_bodies;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kAsyncStart) continue;
      for (const Computation* callee : instruction->called_computations()) {
        async_bodies.insert(callee);
      }
    }
  }
  std::vector<Instruction*> async_starts;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    if (async_bodies.contains(computation)) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() == Opcode::kAsyncStart &&
          instruction->called_computations().size() == 1 && instruction->operand_count() >= 1) {
        const Instruction* root = instruction->called_computations()[0]->root_instruction();
        if (root != nullptr && IsGatherOrScatterNoOp(*root) &&
            root->shape().Compatible(instruction->operand(0)->shape())) {
          async_starts.push_back(instruction);
        }
        continue;
      }
      if (!IsGatherOrScatterNoOp(*instruction)) continue;
      Instruction* operand = instruction->operand(0);
      HLOGYM_RETURN_IF_ERROR(instruction->ReplaceAllUsesWith(operand));
      if (instruction->user_count() == 0 && !instruction->IsRoot()) {
        HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(instruction));
      }
      changed = true;
    }
  }
  if (!async_starts.empty()) {
    std::vector<Computation*> wrapped;
    for (Instruction* start : async_starts) {
      wrapped.push_back(start->called_computations()[0]);
      HLOGYM_RETURN_IF_ERROR(RemoveAsyncPair(start));
      changed = true;
    }
    auto callers = ComputeCallers(module);
    for (Computation* computation : wrapped) {
      auto it = callers.find(computation);
      if ((it == callers.end() || it->second.empty()) && !computation->IsEntry() &&
          module.FindComputation(computation->name()) == computation) {
        HLOGYM_RETURN_IF_ERROR(module.RemoveComputation(computation));
      }
    }
  }

  // 2. All-reduces over single participants or of replicated values.
  Replication replication;
  std::vector<std::pair<Instruction*, int64_t>> candidates;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (instruction->opcode() != Opcode::kAllReduce || !instruction->shape().IsArray() ||
          instruction->operand_count() != 1) {
        continue;
      }
      HLOGYM_ASSIGN(participants, UniformParticipants(*instruction));
      if (!participants) continue;
      const bool cross_replica = !HasChannelId(*instruction);
      if (!cross_replica && (*participants != 1 || !UsesSpmdPartitioning(module))) continue;
      if (*participants == 1 || replication.IsReplicated(instruction->operand(0))) {
        candidates.emplace_back(instruction, *participants);
      }
    }
  }
  for (auto [all_reduce, participants] : candidates) {
    Instruction* replacement = nullptr;
    if (participants == 1) {
      replacement = all_reduce->operand(0);
    } else {
      const Computation* reducer = all_reduce->to_apply();
      if (reducer == nullptr || reducer->instruction_count() != 3 ||
          reducer->num_parameters() != 2) {
        continue;
      }
      switch (reducer->root_instruction()->opcode()) {
        case Opcode::kAdd: {
          HLOGYM_ASSIGN(product, Multiplied(all_reduce, participants));
          replacement = product;
          break;
        }
        case Opcode::kMinimum:
        case Opcode::kMaximum:
        case Opcode::kOr:
        case Opcode::kAnd:
          replacement = all_reduce->operand(0);
          break;
        default:
          break;
      }
    }
    if (replacement == nullptr) continue;
    HLOGYM_RETURN_IF_ERROR(all_reduce->ReplaceAllUsesWith(replacement));
    if (all_reduce->user_count() == 0 && !all_reduce->IsRoot()) {
      HLOGYM_RETURN_IF_ERROR(RemoveInstructionKeepingControlOrder(all_reduce));
    }
    changed = true;
  }
  return changed;
}

}  // namespace hlogym
