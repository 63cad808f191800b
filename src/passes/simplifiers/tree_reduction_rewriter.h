// tree_reduction_rewriter: XLA's TreeReductionRewriter (the CPU one, in
// hlo/transforms/simplifiers), default window size 32 as the CPU pipeline
// uses it. A single-output reduce with a reduced dimension larger than the
// window is split in two levels:
//   reduce(x, init, dims) ->
//     reduce(reduce-window(x, init, window=w, stride=w, SAME padding), init, dims)
// where w = min(size, 32) on reduced dimensions and 1 elsewhere. Each run
// rewrites every qualifying reduce once; the simplification fixed point
// repeats it until every reduced dimension is at most 32.
// Like the pinned XLA's CPU compiler (which passes TreeReductionRewriter a
// filter for the reduces it hands to YNNPACK), a reduce is left whole when
// YNNPACK supports it and prefers it: one input, at least one reduced
// dimension, default layouts, init of the result type, a reducer of exactly
// add (f64/f64, f32/f32, f16 or bf16 to f32, s8 or u8 to s32) or
// maximum/minimum (same type in and out: u8, s8, bf16, f16, f32, f64) of its
// two parameters, and at least 4096 elements in the result or an operand
// (ynn_support's reduce predicate and IsInstructionPreferredByYnn); large
// reductions to a scalar (the grad norms of train modules) stay whole too.
// TreeReductionRewriter(32, /*cpu_library_filter=*/false) gives the generic
// pass.
// Leaves out: variadic reduces (XLA skips them too), other window sizes.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_TREE_REDUCTION_REWRITER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_TREE_REDUCTION_REWRITER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class TreeReductionRewriter : public Pass {
 public:
  explicit TreeReductionRewriter(int64_t reduce_window_size = 32, bool cpu_library_filter = true)
      : reduce_window_size_(reduce_window_size), cpu_library_filter_(cpu_library_filter) {}
  std::string_view name() const override { return "tree_reduction_rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t reduce_window_size_;
  bool cpu_library_filter_;
};

// A copy of `module` whose reductions sum in another order XLA takes: each reduce the generic
// pass splits, split once (for the equivalence check's look at whether the order of a module's
// sums decides its outputs, EquivalenceOptions::sums_reordered).
absl::StatusOr<std::unique_ptr<Module>> SumsReordered(const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_TREE_REDUCTION_REWRITER_H_
