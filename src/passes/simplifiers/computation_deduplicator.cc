#include "passes/simplifiers/computation_deduplicator.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/change_tracking.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

bool HasLargeConstants(const Computation& computation) {
  int64_t bytes = 0;
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode() == Opcode::kConstant) {
      bytes += instruction->shape().ByteSize();
      if (bytes > 1024) return true;
    }
  }
  return false;
}

// A cheap bucket key, without layouts; ComputationsEqual decides (a shape read without a layout
// has the default one, as in XLA).
std::string Signature(const Computation& computation) {
  std::string key = absl::StrCat(computation.instruction_count(), ":",
                                 std::string(OpcodeName(computation.root_instruction()->opcode())),
                                 ":", computation.root_instruction()->shape().ToString(false));
  for (const Shape& shape : computation.ParameterShapes()) {
    absl::StrAppend(&key, ",", shape.ToString(false));
  }
  return key;
}

}  // namespace

// Not an opcode question: a merge needs two computations besides the entry.
bool HloComputationDeduplicator::MayChange(const Module& module) const {
  int candidates = 0;
  for (const auto& computation : module.computations()) {
    if (!computation->IsEntry() && ++candidates >= 2) return true;
  }
  return false;
}

absl::StatusOr<bool> HloComputationDeduplicator::Run(Module& module) {
  // What the pass does depends on the whole module: it skips only a module that did not
  // change at all since its last complete run.
  TrackedRun run(module, std::string(name()));
  if (!run.MustVisitModule()) return false;
  auto callers = ComputeCallers(module);
  absl::flat_hash_map<const Computation*, Computation*> replacement;
  auto canonical = [&](const Computation* c) -> const Computation* {
    auto it = replacement.find(c);
    return it == replacement.end() ? c : it->second;
  };
  ComputationEq same = [&](const Computation* a, const Computation* b) {
    return canonical(a) == canonical(b);
  };
  absl::flat_hash_map<std::string, std::vector<Computation*>> unique;
  for (Computation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsEntry() || computation->instruction_count() > 128 ||
        computation->root_instruction() == nullptr || HasLargeConstants(*computation)) {
      continue;
    }
    bool skip = false;
    for (const Instruction* caller : callers[computation]) {
      if (caller->opcode() == Opcode::kFusion || IsCollective(caller->opcode()) ||
          caller->opcode() == Opcode::kAllReduce || caller->opcode() == Opcode::kReduceScatter) {
        skip = true;
      }
    }
    if (skip) continue;
    std::vector<Computation*>& bucket = unique[Signature(*computation)];
    Computation* match = nullptr;
    for (Computation* candidate : bucket) {
      if (ComputationsEqual(*candidate, *computation, /*layout_sensitive=*/true, same)) {
        match = candidate;
        break;
      }
    }
    if (match != nullptr) {
      replacement[computation] = match;
    } else {
      bucket.push_back(computation);
    }
  }
  if (replacement.empty()) {
    run.Complete();
    return false;
  }
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (Computation*& callee : instruction->mutable_called_computations()) {
        if (auto it = replacement.find(callee); it != replacement.end()) callee = it->second;
      }
    }
  }
  // Every call now goes to a kept computation; only replaced ones call replaced ones.
  absl::flat_hash_set<const Computation*> removed;
  for (const auto& [computation, kept] : replacement) removed.insert(computation);
  absl::Status status = module.RemoveComputations(removed);
  if (!status.ok()) return absl::InternalError(status.message());
  run.Complete();
  return true;
}

}  // namespace hlogym
