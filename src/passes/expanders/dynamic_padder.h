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
// With dynamic dimensions (`f32[<=8]`, from set-dimension-size: TensorFlow's
// tf.unique, tf.where and boolean masks) it pads, as XLA does, where every
// dynamic dimension is of a kind DynamicDimensionInference models (see
// dynamic_dimension_inference.h): the sizes are inferred, the operands of
// reduces, dots, pads and reduce-windows are masked past their sizes with the
// init value or zero (iota < size, select), scatter indices past their sizes
// point out of bounds, elementwise ops whose operands' sizes differ broadcast
// a size-1 operand, concatenations, sorts and reversals along a dynamic
// dimension are rewritten in XLA's forms, get-dimension-size reads the size,
// set-dimension-size and SetBound forward their operands, and every shape
// ends static. Modules with other kinds (dynamic entry parameters or results,
// which XLA wraps in PadToStatic and SliceToDynamic; reshapes splitting a
// dynamic dimension into a minor one or merging one that is not the major;
// convolutions over one) are left dynamic, with only these rewrites, which
// need no padding:
// - get-dimension-size of a dimension set by set-dimension-size (on that
//   dimension) becomes the set-dimension-size's size operand;
// - a custom-call "SetBound" whose operand has its exact shape becomes that
//   operand;
// - a set-dimension-size whose result is static (its size a constant equal to
//   the dimension) and has its operand's shape becomes that operand.
// It reports a change only when it rewrote something (newer XLA sources
// report one on every CPU module through the slice_dynamic_output option;
// the pinned XLA's dumps show none on static modules).
#ifndef HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_
#define HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "passes/pass.h"

namespace hlogym {

class DynamicPadder : public Pass {
 public:
  std::string_view name() const override { return "dynamic_padder"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

// A copy of `module` with its dynamic dimensions padded as DynamicPadder pads
// them (the copy itself where it has none): what the module computes, in
// static shapes, for the evaluator, which computes static shapes only. An
// Unimplemented error names the instruction whose kind is not modelled.
absl::StatusOr<std::unique_ptr<Module>> PaddedToStatic(const Module& module);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_DYNAMIC_PADDER_H_
