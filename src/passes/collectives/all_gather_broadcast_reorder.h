// all-gather-bcast-reorder: XLA's AllGatherBroadcastReorder.
//
// Implements: an array-shaped, single-operand all-gather of a broadcast
// becomes a broadcast of a smaller all-gather when the result dimensions
// that are neither broadcast-operand dimensions nor the gather dimension
// have a product above 1:
//   - gathering along a dimension the broadcast operand has: all-gather the
//     operand along the matching operand dimension, then broadcast with the
//     same dimensions to the old result shape;
//   - gathering along a broadcast (uniform) dimension: reshape the operand to
//     [1, operand dims...], all-gather it along 0 into [n, ...] (n the number
//     of participants: gathered size / operand size), broadcast into the
//     result shape with the gather dimension split into [n, size / n], and
//     reshape to the result shape.
// The new all-gather copies the old one's attributes, with a fresh
// channel_id when it had one. Nothing changes when the module has a
// layout-constrained all-gather.
// Leaves out: nothing of XLA's pass.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_

#include "passes/pass.h"

namespace hlogym {

class AllGatherBroadcastReorder : public Pass {
 public:
  std::string_view name() const override { return "all-gather-bcast-reorder"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_GATHER_BROADCAST_REORDER_H_
