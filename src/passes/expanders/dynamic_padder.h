// dynamic_padder: XLA's DynamicPadder (CPU options), the part that applies
// to the shapes hlogym handles.
//
// On a module without dynamic dimensions XLA's pass only folds
// get-dimension-size; that is implemented in full:
// - every get-dimension-size, in computations reachable from the entry,
//   whose dimension is static becomes an s32 constant of that size;
// - then, when anything was rewritten, dce over the module (XLA's HloDCE
//   after a change). As in the XLA of the pinned jaxlib (its dumps of the
//   corpus show dynamic_padder leaving dead code in place and reporting no
//   change), nothing else happens on a static module; newer XLA sources also
//   run dce first, which is not done here.
// With dynamic dimensions it implements the rewrites that need no padding:
// - get-dimension-size of a dimension set by set-dimension-size (on that
//   dimension) becomes the set-dimension-size's size operand;
// - a custom-call "SetBound" whose operand has its exact shape becomes that
//   operand;
// - a set-dimension-size whose result is static (its size a constant equal to
//   the dimension) and has its operand's shape becomes that operand.
// Leaves out: dynamic-dimension inference beyond those two forms, and with it
// the padding of dynamic data (the iota/compare/select masks before reduces,
// dots, convolutions, reduce-windows, pads, scatters, select-and-scatters),
// the dynamic concatenate/reverse/sort/reshape/binary-op/
// dynamic-update-slice and Dynamic* custom-call rewrites, the PadToStatic and
// SliceToDynamic custom calls at the module's inputs, outputs and around ops
// without dynamic support, forwarding a set-dimension-size that makes a
// dimension dynamic (which needs the padding), the
// removal of dynamic dimensions from shapes, and SetBound calls that change
// the shape; instructions needing them are left unchanged. It reports a
// change only when it rewrote something (newer XLA sources report one on
// every CPU module through the slice_dynamic_output option; the pinned XLA's
// dumps show none on static modules).
#ifndef HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_
#define HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_

#include "passes/pass.h"

namespace hlogym {

class DynamicPadder : public Pass {
 public:
  std::string_view name() const override { return "dynamic_padder"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_
