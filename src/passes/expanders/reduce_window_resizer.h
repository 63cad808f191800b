// reduce-window-resizer: XLA's ReduceWindowResizer (run by XLA's CPU compiler
// right after the reduce-window-rewriter fixed point).
//
// Implements: every reduce-window over rank-1 inputs (variadic ones
// included) becomes reshape to [n, 1] -> reduce-window with an extra trivial
// window dimension -> reshape back to rank 1, so the CPU emitters only see
// reduce-windows of rank 2 or more.
// Leaves out: nothing of XLA's rewrite.
#ifndef HLOGYM_PASSES_EXPANDERS_REDUCE_WINDOW_RESIZER_H_
#define HLOGYM_PASSES_EXPANDERS_REDUCE_WINDOW_RESIZER_H_

#include "passes/pass.h"

namespace hlogym {

class ReduceWindowResizer : public Pass {
 public:
  std::string_view name() const override { return "reduce-window-resizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_REDUCE_WINDOW_RESIZER_H_
