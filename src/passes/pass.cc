#include "passes/pass.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"

namespace hlogym {
namespace {
thread_local PassTimer* active_timer = nullptr;
thread_local OpCountLimit* active_limit = nullptr;

bool IsComposite(const Pass& pass) {
  return dynamic_cast<const PassPipeline*>(&pass) != nullptr ||
         dynamic_cast<const FixedPointPass*>(&pass) != nullptr;
}

// A failed pass's error names the pass (once), so that one failing inside a
// pipeline says which it was.
absl::StatusOr<bool> NamingThePass(const Pass& pass, absl::StatusOr<bool> result) {
  if (result.ok() || IsComposite(pass)) return result;
  const std::string prefix = std::string(pass.name()) + ": ";
  const std::string message(result.status().message());
  if (message.starts_with(prefix)) return result;
  return absl::Status(result.status().code(), prefix + (message.empty() ? "failed without a message"
                                                                        : std::string(message)));
}

}  // namespace

absl::StatusOr<bool> RunPass(Pass& pass, Module& module) {
  if (active_timer == nullptr || IsComposite(pass)) {
    if (!pass.MayChange(module)) return false;
    return NamingThePass(pass, pass.Run(module));
  }
  const auto start = std::chrono::steady_clock::now();
  const bool skipped = !pass.MayChange(module);
  absl::StatusOr<bool> changed = skipped ? false : NamingThePass(pass, pass.Run(module));
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  active_timer->Record(pass.name(), skipped, changed.ok() && *changed, elapsed.count());
  if (changed.ok() && *changed) {
    active_timer->changes_.push_back({std::string(pass.name()), module.instruction_count()});
    if (active_timer->after_change_) active_timer->after_change_(pass.name(), module);
  }
  return changed;
}

OpCountLimit::OpCountLimit(int64_t max_op_count)
    : max_op_count_(max_op_count), outer_(active_limit) {
  active_limit = this;
}

OpCountLimit::~OpCountLimit() { active_limit = outer_; }

absl::Status CheckOpCountLimit(const Module& module, std::string_view pass) {
  if (active_limit == nullptr) return absl::OkStatus();
  const int64_t op_count = module.instruction_count();
  if (op_count <= active_limit->max_op_count_) return absl::OkStatus();
  active_limit->reached_ = true;
  return absl::ResourceExhaustedError(absl::StrCat(std::string(pass), " stopped at ", op_count,
                                                   " instructions, past the limit of ",
                                                   active_limit->max_op_count_));
}

PassTimer::PassTimer() : outer_(active_timer) { active_timer = this; }

PassTimer::~PassTimer() { active_timer = outer_; }

double PassTimer::total_seconds() const {
  double total = 0;
  for (const Entry& entry : entries_) total += entry.seconds;
  return total;
}

void PassTimer::Record(std::string_view name, bool skipped, bool changed, double seconds) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& entry) { return entry.name == name; });
  if (it == entries_.end()) it = entries_.insert(it, Entry{.name = std::string(name)});
  ++it->runs;
  it->skipped += skipped;
  it->changed += changed;
  it->seconds += seconds;
}

absl::StatusOr<bool> PassPipeline::Run(Module& module) {
  bool changed = false;
  for (const auto& pass : passes_) {
    HLOGYM_ASSIGN(pass_changed, RunPass(*pass, module));
    changed |= pass_changed;
  }
  return changed;
}

// When no pass may change the module, each is skipped and leaves the next the
// same module: the pipeline changes nothing.
bool PassPipeline::MayChange(const Module& module) const {
  for (const auto& pass : passes_) {
    if (pass->MayChange(module)) return true;
  }
  return false;
}

absl::StatusOr<bool> FixedPointPass::Run(Module& module) {
  bool changed = false;
  for (int iteration = 0; iteration < max_iterations_; ++iteration) {
    HLOGYM_ASSIGN(iteration_changed, RunPass(*inner_, module));
    if (!iteration_changed) break;
    changed = true;
  }
  return changed;
}

}  // namespace hlogym
