#include "passes/pass.h"

namespace hlogym {

absl::StatusOr<bool> PassPipeline::Run(Module& module) {
  bool changed = false;
  for (const auto& pass : passes_) {
    absl::StatusOr<bool> pass_changed = pass->Run(module);
    if (!pass_changed.ok()) return pass_changed.status();
    changed |= *pass_changed;
  }
  return changed;
}

absl::StatusOr<bool> FixedPointPass::Run(Module& module) {
  bool changed = false;
  for (int iteration = 0; iteration < max_iterations_; ++iteration) {
    absl::StatusOr<bool> iteration_changed = inner_->Run(module);
    if (!iteration_changed.ok()) return iteration_changed.status();
    if (!*iteration_changed) break;
    changed = true;
  }
  return changed;
}

}  // namespace hlogym
