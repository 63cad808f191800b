// strip-memory-placement-annotations: XLA's StripMemoryPlacementAnnotations
// (the CPU compiler's "pre-spmd-partitioner" pipeline).
//
// Implements: every custom call whose target is "annotate_device_placement",
// "MoveToHost" or "MoveToDevice" (in any computation) is bypassed: its users,
// and the root when it is the root, use its single operand instead, and the
// custom call is removed together with its control edges (which are dropped,
// as XLA does). A sharding on the annotation moves to the operand when the
// operand has none. A placement custom call without exactly one operand is
// an error naming it (checked before anything is rewritten).
// Leaves out: nothing (XLA's pass is this small); the memory placement the
// annotations carried is simply forgotten, which is what XLA's CPU backend
// wants (it has no host memory space).
#ifndef HLOGYM_PASSES_SHARDING_STRIP_MEMORY_PLACEMENT_ANNOTATIONS_H_
#define HLOGYM_PASSES_SHARDING_STRIP_MEMORY_PLACEMENT_ANNOTATIONS_H_

#include "passes/pass.h"

namespace hlogym {

class StripMemoryPlacementAnnotations : public Pass {
 public:
  std::string_view name() const override { return "strip-memory-placement-annotations"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_STRIP_MEMORY_PLACEMENT_ANNOTATIONS_H_
