// all-reduce-reassociate: XLA's AllReduceReassociate.
//
// Implements: op(all-reduce(a), all-reduce(b)) -> all-reduce(op(a, b)) for an
// array-shaped add / multiply / minimum / maximum (and / or of pred) whose
// two all-reduces reduce with the same kind as op and agree on element type,
// replica groups, having a channel_id and use_global_device_ids. Between op
// and each all-reduce there may be a chain of reshape, slice and pad (padding
// with the reduction's identity), every link and the all-reduce used only
// once; the chain then applies to a and b, and the rewrite is skipped when
// the new all-reduce would reduce more elements than the two old ones
// together. The new all-reduce is a copy of the first one (its attributes,
// channel_id included) with op's shape. Nothing changes when the module has a
// layout-constrained all-reduce.
// Leaves out: looking through convert and the promoted (wider-type)
// all-reduce XLA builds for op(convert(all-reduce), convert(all-reduce));
// the all-reduce + dynamic-slice (reduce-scatter) pattern; identities of
// min/max pads on integer types (only 0 for sums, 1 for products and
// +/-infinity for float min/max pads are recognized); the collective group
// key comparison of newer XLA.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_REASSOCIATE_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_REASSOCIATE_H_

#include "passes/pass.h"

namespace hlogym {

class AllReduceReassociate : public Pass {
 public:
  std::string_view name() const override { return "all-reduce-reassociate"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_REASSOCIATE_H_
