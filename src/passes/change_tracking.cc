#include "passes/change_tracking.h"

#include <cstdlib>
#include <string_view>
#include <utility>

namespace hlogym {

bool TrackingDisabled() {
  static const bool disabled = [] {
    const char* value = std::getenv("HLOGYM_NO_CHANGE_TRACKING");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  }();
  return disabled;
}

bool ChangedSince(Computation& computation, uint64_t since) {
  if (computation.changed_at() > since) return true;
  for (Computation* callee : computation.Callees()) {
    if (ChangedSince(*callee, since)) return true;
  }
  return false;
}

bool NeighborhoodChangedSince(const Instruction& instruction, uint64_t since) {
  if (instruction.changed_at() > since) return true;
  for (const Instruction* operand : instruction.operands()) {
    if (operand->changed_at() > since) return true;
    for (const Instruction* operand_operand : operand->operands()) {
      if (operand_operand->changed_at() > since) return true;
    }
  }
  for (const Instruction* user : instruction.users()) {
    if (user->changed_at() > since) return true;
  }
  for (Computation* callee : instruction.called_computations()) {
    if (callee == nullptr || ChangedSince(*callee, since)) return true;
  }
  return false;
}

namespace {

bool AnyComputationChangedSince(const Module& module, uint64_t since) {
  for (const auto& computation : module.computations()) {
    if (computation->changed_at() > since) return true;
  }
  return false;
}

bool TrackingEnabled(const Module& module) {
  return module.change_tracking() && !TrackingDisabled();
}

// The start of the last complete run of `key`, unless the entry or header changed after it.
std::optional<uint64_t> UsableRecord(const Module& module, std::string_view key) {
  if (!TrackingEnabled(module)) return std::nullopt;
  std::optional<uint64_t> last = module.PassRunStart(key);
  if (!last || module.header_changed_at() > *last) return std::nullopt;
  return last;
}

}  // namespace

bool UnchangedSinceLastRun(const Module& module, std::string_view key) {
  std::optional<uint64_t> last = UsableRecord(module, key);
  return last && !AnyComputationChangedSince(module, *last);
}

TrackedRun::TrackedRun(Module& module, std::string key)
    : module_(module),
      key_(std::move(key)),
      started_at_(module.change_clock()),
      enabled_(TrackingEnabled(module)),
      since_(UsableRecord(module, key_)),
      module_unchanged_(since_ && !AnyComputationChangedSince(module, *since_)) {}

}  // namespace hlogym
