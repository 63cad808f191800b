#include "passes/sharding/shardy_xla.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/query.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr std::string_view kManualComputationBody = "xla.sdy.manual_computation_body";
constexpr std::string_view kInlineable = "inlineable";

// Removes frontend attribute `key` from `instruction`; true if it had it.
bool EraseFrontendAttribute(Instruction& instruction, std::string_view key) {
  auto entries = GetFrontendAttributes(instruction);
  if (!entries) return false;
  auto it = std::find_if(entries->begin(), entries->end(),
                         [&](const FrontendAttribute& e) { return e.key == key; });
  if (it == entries->end()) return false;
  entries->erase(it);
  SetFrontendAttributes(instruction, *entries);
  return true;
}

bool HasFrontendAttribute(const Instruction& instruction, std::string_view key) {
  auto entries = GetFrontendAttributes(instruction);
  return entries && std::any_of(entries->begin(), entries->end(),
                                [&](const FrontendAttribute& e) { return e.key == key; });
}

}  // namespace

bool IsShardyManualComputationBody(const Computation& computation) {
  return computation.name().find(kManualComputationBody) != std::string::npos;
}

absl::StatusOr<bool> ShardyXla::Run(Module& module) {
  bool changed = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kCall) continue;
      Computation* callee = instruction->to_apply();
      if (callee == nullptr || !IsShardyManualComputationBody(*callee) ||
          !HasFrontendAttribute(*instruction, kInlineable)) {
        continue;
      }
      EraseFrontendAttribute(*instruction, kInlineable);
      callee->set_name(module.UniqueName("inlineable_callee"));
      changed = true;
    }
  }
  return changed;
}

// Only calls (to manual-computation bodies) are rewritten.
bool ShardyXla::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCall});
}

}  // namespace hlogym
