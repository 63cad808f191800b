// scatter-slice-simplifier: XLA's ScatterSliceSimplifier (the GPU compiler's
// "simplification" fixed point).
//
// Implements: a scatter (single or variadic) whose results reach the rest
// of the program only through slices that keep a leading part of every
// dimension (start 0, stride 1), possibly after get-tuple-elements and
// elementwise ops, is rebuilt on operands sliced to that part: the new
// scatter has the same indices, updates, update computation and flags; the
// get-tuple-elements and elementwise ops in between are rebuilt at the
// smaller shape (their other operands sliced the same way); and each slice
// is replaced by the rebuilt value it read. This is sound because a scatter
// drops updates whose window does not fit in the operand, so updates that
// only wrote the cut-off part are dropped instead.
// Matches when: every slice has the same limits, these differ from the
// operand's dimensions, no value in the chain is a computation root or has
// control edges, and every cut dimension has a window extent of 1 (an
// inserted window dimension, or an update window dimension of size 1).
// Differs from XLA: XLA tests the cut operand dimension number against
// update_window_dims (which number update dimensions), which accepts some
// unsound cuts of wide windows and refuses some sound ones; XLA also
// accepts slices with different limits as long as each dimension is cut at
// most one way, and rewrites a scatter whose slices cut nothing. hlogym
// requires one common limit and a real cut.
// Leaves out: fusion computations (as XLA does), scatters with batching
// dimensions cut along a batching dimension.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class ScatterSliceSimplifier : public Pass {
 public:
  std::string_view name() const override { return "scatter-slice-simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_SCATTER_SLICE_SIMPLIFIER_H_
