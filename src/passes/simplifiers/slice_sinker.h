// slice-sinker: XLA's SliceSinker. When elementwise ops all apply to slices
// taken at the same indices of the same sources, and together they cover
// at least as many elements as a source, they become one op on the sources
// followed by slices:
//   op(slice(a), slice(b)), op(slice'(a), slice'(b)), ... ->
//   slice(op(a, b)), slice'(op(a, b)), ...
// Group members: same opcode and attributes and result element type, the
// i-th operand of each a slice of the same source as the first op's, all
// operands of a member sliced identically; members must still have users.
// The old ops are left dead (dce removes them), as in XLA.
// Leaves out: map (XLA's IsElementwise counts it; its dimensions would need
// rewriting).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_SLICE_SINKER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_SLICE_SINKER_H_

#include "passes/pass.h"

namespace hlogym {

class SliceSinker : public Pass {
 public:
  std::string_view name() const override { return "slice-sinker"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_SLICE_SINKER_H_
