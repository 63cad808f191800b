// dce: XLA's HloDCE with its default options.
//
// Implements:
//  - removal of dead instructions (no users, not the root) in every
//    computation reachable from the entry, visiting users before operands so
//    chains of dead instructions go in one run;
//  - side effects are respected as XLA does: an instruction that has a side
//    effect itself or through any computation it calls (a while loop whose
//    body has an outfeed, a call of a computation with an rng, ...) stays;
//  - instructions with control dependencies stay (XLA's IsSafelyRemovable);
//  - a custom-call "Sharding" stays when its operand is the root, a
//    parameter, or has other users (as XLA keeps it);
//  - parameters are never removed;
//  - a multi-output fusion read only through get-tuple-elements loses the
//    outputs none of them reads (its fused root tuple and its shape shrink,
//    the indices are renumbered; one output left is the fusion's result);
//  - then every computation no longer reachable from the entry is removed
//    (XLA's dangling-computation removal, on by default).
// Leaves out: removing dead fusion parameters, the
// remove_cross_partition_collective_ops and
// remove-dead-entry-parameters options (all off or irrelevant by default
// before fusion), the xla_allow_dce_side_effecting_op frontend attribute.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_DCE_H_
#define HLOGYM_PASSES_SIMPLIFIERS_DCE_H_

#include "passes/pass.h"

namespace hlogym {

class HloDce : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_DCE_H_
