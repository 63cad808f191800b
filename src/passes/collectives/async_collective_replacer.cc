#include "passes/collectives/async_collective_replacer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

absl::Status Bad(const Instruction& instruction, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("async-collective-replacer: ", instruction.name(), ": ", why));
}

bool IsControlDep(const Instruction* instruction) {
  return instruction->opcode() == Opcode::kCustomCall &&
         instruction->attrs().custom_call_target == "control_dep";
}

// The synchronous opcode a dedicated start op becomes, if it is one.
std::optional<Opcode> DedicatedSyncOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduceStart:
      return Opcode::kAllReduce;
    case Opcode::kAllGatherStart:
      return Opcode::kAllGather;
    case Opcode::kCollectivePermuteStart:
      return Opcode::kCollectivePermute;
    default:
      return std::nullopt;
  }
}

Opcode DoneOpcode(Opcode start) {
  switch (start) {
    case Opcode::kAllReduceStart:
      return Opcode::kAllReduceDone;
    case Opcode::kAllGatherStart:
      return Opcode::kAllGatherDone;
    case Opcode::kCollectivePermuteStart:
      return Opcode::kCollectivePermuteDone;
    default:
      return Opcode::kAsyncDone;
  }
}

bool IsWrappableCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

// The collective an async-start wraps, or nullptr when it wraps something
// else.
const Instruction* WrappedCollective(const Instruction& start) {
  if (start.opcode() != Opcode::kAsyncStart || start.called_computations().size() != 1) {
    return nullptr;
  }
  const Instruction* root = start.called_computations()[0]->root_instruction();
  return root != nullptr && IsWrappableCollective(root->opcode()) ? root : nullptr;
}

// The users of `instruction` that are not control_dep custom calls.
std::vector<Instruction*> RealUsers(const Instruction* instruction) {
  std::vector<Instruction*> users;
  for (Instruction* user : instruction->users()) {
    if (!IsControlDep(user)) users.push_back(user);
  }
  return users;
}

// Sets frontend attribute `key` to the quoted `value`, keeping the others.
void SetFrontendAttribute(Instruction& instruction, const std::string& key,
                          const std::string& value) {
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  std::vector<FrontendAttribute> entries =
      GetFrontendAttributes(instruction).value_or(std::vector<FrontendAttribute>());
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const FrontendAttribute& e) { return e.key == key; }),
                entries.end());
  entries.push_back({key, quoted});
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const FrontendAttribute& a, const FrontendAttribute& b) { return a.key < b.key; });
  SetFrontendAttributes(instruction, entries);
}

// Gives `sync` the start's metadata and backend_config (or none, as the
// start has), like XLA's set_metadata / CopyBackendConfigFrom.
void CopyMetadataAndBackendConfig(const Instruction& start, Instruction& sync) {
  for (const char* key : {"metadata", "backend_config"}) {
    if (const RawAttribute* raw = start.attrs().FindRaw(key)) {
      sync.mutable_attrs().SetRaw(key, raw->value);
    } else if (sync.attrs().FindRaw(key) != nullptr) {
      sync.mutable_attrs().EraseRaw(key);
    }
  }
}

struct AsyncChain {
  Instruction* start = nullptr;
  std::vector<Instruction*> updates;  // async-update ops, in order
  Instruction* done = nullptr;
};

// Finds the done (through any async-updates) of `start` and checks the
// chain can be replaced.
absl::StatusOr<AsyncChain> FindChain(Instruction* start) {
  AsyncChain chain;
  chain.start = start;
  const Opcode done_opcode = DoneOpcode(start->opcode());
  Instruction* current = start;
  while (true) {
    std::vector<Instruction*> users = RealUsers(current);
    if (users.size() != 1) {
      return Bad(*current, absl::StrCat("expected exactly one user, the matching ",
                                        std::string(OpcodeName(done_opcode)),
                                        " (or async-update), found ", users.size()));
    }
    Instruction* next = users[0];
    if (next->opcode() == done_opcode && next->operand_count() == 1) {
      chain.done = next;
      return chain;
    }
    if (start->opcode() == Opcode::kAsyncStart && next->opcode() == Opcode::kAsyncUpdate &&
        next->operand_count() == 1) {
      if (!next->control_predecessors().empty() || !next->control_successors().empty() ||
          std::any_of(next->users().begin(), next->users().end(), IsControlDep)) {
        return Bad(*next, "an async-update with control dependencies cannot be replaced");
      }
      chain.updates.push_back(next);
      current = next;
      continue;
    }
    return Bad(*start, absl::StrCat("expected its matching ", std::string(OpcodeName(done_opcode)),
                                    ", found user ", next->name()));
  }
}

// Builds the synchronous instruction for `chain` (unattached).
absl::StatusOr<std::unique_ptr<Instruction>> MakeSync(const AsyncChain& chain) {
  const Instruction& start = *chain.start;
  const Shape& shape = chain.done->shape();
  std::unique_ptr<Instruction> sync;
  if (std::optional<Opcode> opcode = DedicatedSyncOpcode(start.opcode())) {
    if (*opcode == Opcode::kCollectivePermute && start.operand_count() != 1) {
      return Bad(start, absl::StrCat("a collective-permute-start with ", start.operand_count(),
                                     " operands cannot be made synchronous"));
    }
    sync = std::make_unique<Instruction>(*opcode, shape);
    InstructionAttributes& attrs = sync->mutable_attrs();
    attrs = start.attrs();
    std::vector<std::string_view> kept =
        *opcode == Opcode::kCollectivePermute
            ? std::vector<std::string_view>{"source_target_pairs", "channel_id"}
            : std::vector<std::string_view>{"replica_groups", "constrain_layout", "channel_id",
                                            "use_global_device_ids"};
    attrs.raw.erase(std::remove_if(attrs.raw.begin(), attrs.raw.end(),
                                   [&](const RawAttribute& raw) {
                                     return std::find(kept.begin(), kept.end(), raw.key) ==
                                            kept.end();
                                   }),
                    attrs.raw.end());
    sync->mutable_called_computations() = start.called_computations();
    for (Instruction* operand : start.operands()) sync->AppendOperand(operand);
  } else {
    const Instruction* wrapped = WrappedCollective(start);
    const Computation* body = start.called_computations()[0];
    if (wrapped->operand_count() != start.operand_count() ||
        body->num_parameters() != start.operand_count()) {
      return Bad(start, "the wrapped collective must take the async-start's operands in order");
    }
    for (int64_t i = 0; i < wrapped->operand_count(); ++i) {
      if (wrapped->operand(i) != body->parameter_instruction(i)) {
        return Bad(start, "the wrapped collective must take the async-start's operands in order");
      }
    }
    sync = wrapped->CloneWithNewOperands(start.operands(), "");
    sync->set_shape(shape);
  }
  CopyMetadataAndBackendConfig(start, *sync);
  SetFrontendAttribute(*sync, "async_collective_name", start.name());
  return sync;
}

}  // namespace

bool AsyncCollectiveReplacer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kAllReduceStart, Opcode::kAllGatherStart,
                                 Opcode::kCollectivePermuteStart, Opcode::kAsyncStart});
}

absl::StatusOr<bool> AsyncCollectiveReplacer::Run(Module& module) {
  // Fusion bodies are left alone, as XLA's MakeNonfusionComputations does.
  absl::flat_hash_set<const Computation*> fusion_bodies;
  for (const auto& [callee, callers] : ComputeCallers(module)) {
    for (const Instruction* caller : callers) {
      if (caller->opcode() == Opcode::kFusion) fusion_bodies.insert(callee);
    }
  }
  // First find and check every chain, then rewrite.
  struct Work {
    AsyncChain chain;
    std::vector<Instruction*> control_deps;
  };
  std::vector<Work> work;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (fusion_bodies.contains(computation)) continue;
    bool any = false;
    for (const auto& instruction : computation->instructions()) {
      any |= DedicatedSyncOpcode(instruction->opcode()).has_value() ||
             WrappedCollective(*instruction) != nullptr;
    }
    if (!any) continue;
    for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
      if (!DedicatedSyncOpcode(instruction->opcode()) &&
          WrappedCollective(*instruction) == nullptr) {
        continue;
      }
      HLOGYM_ASSIGN(chain, FindChain(instruction));
      Work item{chain, {}};
      for (Instruction* end : {chain.start, chain.done}) {
        for (Instruction* user : end->users()) {
          if (!IsControlDep(user)) continue;
          if (!user->users().empty() || user->IsRoot()) {
            return Bad(*user, "a control_dep on a replaced async collective cannot be used");
          }
          if (std::find(item.control_deps.begin(), item.control_deps.end(), user) ==
              item.control_deps.end()) {
            item.control_deps.push_back(user);
          }
        }
      }
      work.push_back(std::move(item));
    }
  }
  // Build every synchronous instruction before editing, so that a failure
  // leaves the module unchanged.
  std::vector<std::unique_ptr<Instruction>> syncs;
  for (const Work& item : work) {
    HLOGYM_ASSIGN(sync, MakeSync(item.chain));
    syncs.push_back(std::move(sync));
  }
  absl::flat_hash_set<Instruction*> removed;
  for (size_t i = 0; i < work.size(); ++i) {
    const AsyncChain& chain = work[i].chain;
    Computation* computation = chain.start->parent();
    for (Instruction* control_dep : work[i].control_deps) {
      if (!removed.insert(control_dep).second) continue;
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(control_dep));
    }
    Instruction* sync = computation->AddInstruction(std::move(syncs[i]));
    HLOGYM_RETURN_IF_ERROR(chain.done->ReplaceAllUsesWith(sync));
    chain.start->DropAllControlDeps();
    chain.done->DropAllControlDeps();
    std::vector<Instruction*> dead = {chain.done};
    for (auto it = chain.updates.rbegin(); it != chain.updates.rend(); ++it) dead.push_back(*it);
    dead.push_back(chain.start);
    for (Instruction* instruction : dead) {
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(instruction));
    }
  }
  return !work.empty();
}

}  // namespace hlogym
