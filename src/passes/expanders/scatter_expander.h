// scatter_expander: XLA's ScatterExpander.
//
// Implements: a scatter becomes a counted while loop over its indices. The
// indices are canonicalized to [N] or [N, K] as gather_expander does; the
// updates are transposed so the scatter dimensions lead (window dimensions
// follow in order) and reshaped to [N, window...]. Each iteration
// dynamic-slices one index vector, builds the operand start (components per
// scatter_dims_to_operand_dims, zero elsewhere), dynamic-slices the update
// window (with the inserted window dimensions put back as size 1) and the
// operand slice at that start, combines them with a map of the update
// computation, keeps the old slice when the window does not fit in bounds
// (0 <= start <= operand size - window size in every dimension: scatter
// skips such updates), and dynamic-update-slices the result into the
// operand. Scatters with zero-element updates become their operand.
// Modes: "scatter_expander" is XLA's kEliminateSimpleScatters (what the CPU
// pipeline runs with its default fusion emitters, and GPU): scatters with
// one index only; "scatter_expander-all" is kEliminateAllScatters (CPU
// without fusion emitters); "gpu_scatter_expander" is XLA's
// GpuScatterExpander (every scatter of elements wider than 64 bits, c128).
// Differs from XLA: index components are taken as scalars, as in
// gather_expander; identity transposes are not emitted.
// Leaves out: variadic scatters (so gpu_scatter_expander leaves alone the
// variadic scatters XLA's GPU variant expands), scatters with batching
// dimensions, and XLA's GPU kEliminateIndeterministicScatters mode; they
// are left alone.
#ifndef HLOGYM_PASSES_EXPANDERS_SCATTER_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_SCATTER_EXPANDER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

class ScatterExpander : public Pass {
 public:
  enum class Mode {
    kEliminateAllScatters,
    kEliminateSimpleScatters,
    kEliminateGpuUnsupportedScatters,
  };
  explicit ScatterExpander(Mode mode, std::string name = "scatter_expander")
      : mode_(mode), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  Mode mode_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_SCATTER_EXPANDER_H_
