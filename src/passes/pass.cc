#include "passes/pass.h"

namespace hlogym {

absl::StatusOr<bool> RunPass(Pass& pass, Module& module) {
  if (!pass.MayChange(module)) return false;
  return pass.Run(module);
}

absl::StatusOr<bool> PassPipeline::Run(Module& module) {
  bool changed = false;
  for (const auto& pass : passes_) {
    absl::StatusOr<bool> pass_changed = RunPass(*pass, module);
    if (!pass_changed.ok()) return pass_changed.status();
    changed |= *pass_changed;
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
    absl::StatusOr<bool> iteration_changed = RunPass(*inner_, module);
    if (!iteration_changed.ok()) return iteration_changed.status();
    if (!*iteration_changed) break;
    changed = true;
  }
  return changed;
}

}  // namespace hlogym
