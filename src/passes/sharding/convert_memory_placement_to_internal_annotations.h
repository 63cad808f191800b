// convert-memory-placement-to-internal-annotations: XLA's
// ConvertMemoryPlacementToInternalAnnotations (first pass of the GPU
// compiler's "pre-spmd-partitioner" pipeline).
//
// Implements: in every non-fusion computation, a custom call with target
// "annotate_device_placement" whose frontend attribute
// _xla_buffer_placement names a memory space is replaced by XLA's internal
// annotation over the same operand, with the operand's shape:
//   pinned_host, unpinned_host  -> custom call "MoveToHost"
//   device                      -> custom call "MoveToDevice"
//   pinned_device               -> custom call "PinToDevice"
//   vmem (device SRAM)          -> custom call "PinToDeviceSram"
// The new custom call takes the annotation's sharding (and nothing else:
// no frontend attributes, metadata or backend config, as in XLA). An
// annotation without the attribute, or with another value, is left alone.
// Errors (named after the instruction, raised before anything is
// rewritten): a recognized annotation without exactly one operand, a result
// shape that differs from its operand's, unreadable frontend attributes.
// Differs from XLA: control edges move to the new custom call (XLA's
// removal would fail on them); XLA checks the operand count only for the
// to-host case. "device_sram" is accepted as a spelling of vmem.
// Leaves out: nothing else; what the internal annotations mean (host
// offloading) is for later passes hlogym does not have.
#ifndef HLOGYM_PASSES_SHARDING_CONVERT_MEMORY_PLACEMENT_TO_INTERNAL_ANNOTATIONS_H_
#define HLOGYM_PASSES_SHARDING_CONVERT_MEMORY_PLACEMENT_TO_INTERNAL_ANNOTATIONS_H_

#include "passes/pass.h"

namespace hlogym {

class ConvertMemoryPlacementToInternalAnnotations : public Pass {
 public:
  std::string_view name() const override {
    return "convert-memory-placement-to-internal-annotations";
  }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_CONVERT_MEMORY_PLACEMENT_TO_INTERNAL_ANNOTATIONS_H_
