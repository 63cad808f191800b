// tree_reduction_rewriter: XLA's TreeReductionRewriter (the CPU one, in
// hlo/transforms/simplifiers), default window size 32 as the CPU pipeline
// uses it. A single-output reduce with a reduced dimension larger than the
// window is split in two levels:
//   reduce(x, init, dims) ->
//     reduce(reduce-window(x, init, window=w, stride=w, SAME padding), init, dims)
// where w = min(size, 32) on reduced dimensions and 1 elsewhere. Each run
// rewrites every qualifying reduce once; the simplification fixed point
// repeats it until every reduced dimension is at most 32.
// Leaves out: variadic reduces (XLA skips them too), other window sizes.
#ifndef HLOGYM_PASSES_TREE_REDUCTION_REWRITER_H_
#define HLOGYM_PASSES_TREE_REDUCTION_REWRITER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class TreeReductionRewriter : public Pass {
 public:
  explicit TreeReductionRewriter(int64_t reduce_window_size = 32)
      : reduce_window_size_(reduce_window_size) {}
  std::string_view name() const override { return "tree_reduction_rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  int64_t reduce_window_size_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TREE_REDUCTION_REWRITER_H_
