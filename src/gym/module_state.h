// ModuleState: one immutable state of the environment, a module plus what the
// gym derives from it. States are shared (by shared_ptr) between environments,
// forks, the step cache and the benchmark cache, and are never mutated: a step
// runs its pass on a clone.
#ifndef HLOGYM_GYM_MODULE_STATE_H_
#define HLOGYM_GYM_MODULE_STATE_H_

#include <memory>
#include <mutex>

#include "analysis/cost_analysis.h"
#include "analysis/op_stats.h"
#include "hlo/fingerprint.h"
#include "hlo/module.h"

namespace hlogym {

class ModuleState {
 public:
  // Takes the module; computes its op statistics (the rest lazily, thread-safe).
  static std::shared_ptr<const ModuleState> Make(std::unique_ptr<Module> module);

  const Module& module() const { return *module_; }
  // Structural fingerprint (hlo/fingerprint.h), computed on first use.
  const Fingerprint& fingerprint() const;
  const OpStats& stats() const { return stats_; }
  int64_t op_count() const { return stats_.op_count; }
  // Cost features (HloCostAnalysis conventions), computed on first use.
  const CostFeatures& cost() const;

 private:
  ModuleState() = default;
  std::unique_ptr<const Module> module_;
  OpStats stats_;
  mutable std::once_flag fingerprint_once_;
  mutable Fingerprint fingerprint_;
  mutable std::once_flag cost_once_;
  mutable CostFeatures cost_;
};

using StatePtr = std::shared_ptr<const ModuleState>;

}  // namespace hlogym

#endif  // HLOGYM_GYM_MODULE_STATE_H_
