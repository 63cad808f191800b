#include "passes/change_tracking.h"

#include <cstdlib>
#include <string_view>
#include <utility>

namespace hlogym {

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

bool TrackingDisabled() {
  static const bool disabled = [] {
    const char* value = std::getenv("HLOGYM_NO_CHANGE_TRACKING");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  }();
  return disabled;
}

TrackedRun::TrackedRun(Module& module, std::string key)
    : module_(module), key_(std::move(key)), started_at_(module.change_clock()) {
  if (TrackingDisabled()) return;
  std::optional<uint64_t> last = module.PassRunStart(key_);
  if (last && module.header_changed_at() <= *last) since_ = last;
}

bool TrackedRun::MustVisitModule() const {
  if (!since_) return true;
  for (const auto& computation : module_.computations()) {
    if (computation->changed_at() > *since_) return true;
  }
  return false;
}

}  // namespace hlogym
