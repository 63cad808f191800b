// convert-mover: XLA's ConvertMover. Moves precision-changing converts
// across ops that commute with them (concatenate, pad, reshape, slice,
// transpose), so that work happens in the narrower type:
//  - widening converts move down: op(convert(x), ..., constant) ->
//    convert(op(x, ..., convert(constant))) when every operand is a
//    single-use convert from the same narrower type or a constant that
//    survives the round trip through that type;
//  - narrowing converts move up: convert(op(x, y)) ->
//    op(convert(x), convert(y)) when op has no other user (repeated on the
//    new converts, top-down).
// Sub-byte (non-pred) narrow types are left alone, as in XLA.
// Leaves out: complex constants and elided constants count as not losslessly
// convertible (the move is skipped).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_

#include "passes/pass.h"

namespace hlogym {

class ConvertMover : public Pass {
 public:
  std::string_view name() const override { return "convert-mover"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_CONVERT_MOVER_H_
