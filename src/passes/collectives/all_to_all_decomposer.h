// all_to_all_decomposer: XLA's AllToAllDecomposer as XLA's CPU compiler runs
// it (decompose to tuple, minimum array rank 0).
//
// Implements: an array all-to-all (with a split dimension, not
// constrain_layout) over groups of G participants (the size of the first
// replica group, or the module's replica_count when there are none) becomes
// G slices of the operand along the split dimension, a tuple all-to-all of
// those slices (same replica groups and channel id, no split dimension),
// one get-tuple-element per slice, and their concatenation along the split
// dimension.
// Leaves out: the array-rank padding mode (decompose_to_tuple off, used by
// other backends) and ragged all-to-all, which that mode alone touches.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_TO_ALL_DECOMPOSER_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_TO_ALL_DECOMPOSER_H_

#include "passes/pass.h"

namespace hlogym {

class AllToAllDecomposer : public Pass {
 public:
  std::string_view name() const override { return "all_to_all_decomposer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_TO_ALL_DECOMPOSER_H_
