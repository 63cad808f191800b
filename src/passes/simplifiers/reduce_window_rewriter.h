// reduce-window-rewriter: XLA's ReduceWindowRewriter with a base length
// (16, the value XLA's hlo-opt registers it with).
//
// Implements, for every reduce-window (variadic ones included):
// - Scans: when exactly one window dimension is non-trivial and it is a full
//   cumulative window over a dimension of length L > base length (size L,
//   stride 1, no dilation or reversal, padding (L-1 or L, 0) for a forward
//   scan or (0, L-1 or L) for a reverse one; padding L means exclusive), the
//   scan is split in two levels: the scanned dimension is moved last
//   (transpose), padded with the init value to a multiple B of the base
//   length, reshaped to [..., B/base, base]; an inner reduce-window scans
//   each row of base elements, a second reduce-window scans (exclusively)
//   the row totals (last or first column), which are broadcast back and
//   combined with the inner scan by a map of the reducer (for a tuple
//   reducer, a copy of it returning just that element); then reshape,
//   transpose back, slice off the padding, and pad by one init value for an
//   exclusive scan.
// - Otherwise a rank-1 reduce-window becomes reshape -> rank-2 reduce-window
//   (an extra size-1 trailing dimension with a trivial window) -> reshape.
// As in XLA, instructions the pass creates are not revisited in the same
// run (a rank-1 scan leaves a rank-1 reduce-window for the next run).
// Leaves out: reducers whose tuple root is not a tuple instruction (left
// alone, as XLA does).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_REWRITER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_REWRITER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

// The scan rewrite above on one reduce-window: true when it applied (the
// reduce-window is then replaced and removed). Shared with
// associative-scan-rewriter, whose long scans XLA splits the same way.
absl::StatusOr<bool> RewriteCumulativeReduceWindow(Instruction* reduce_window, int64_t base_length);

class ReduceWindowRewriter : public Pass {
 public:
  explicit ReduceWindowRewriter(int64_t base_length = 16) : base_length_(base_length) {}
  std::string_view name() const override { return "reduce-window-rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t base_length_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_REWRITER_H_
