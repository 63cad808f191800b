// reshape-decomposer: XLA's ReshapeDecomposer (a layout-normalization pass of
// XLA's GPU pipeline). Every reshape that is not a bitcast under its
// operand's and result's layouts is split into a bitcast-reshape and
// physical copies:
//  - if the operand can be given a layout making the reshape a bitcast:
//    reshape(copy(operand) with that layout);
//  - else if the result can: copy(reshape(operand) with that layout);
//  - else copy(reshape(copy(operand) to the descending layout)) to the
//    result's layout.
// Shapes without a layout count as having the default (descending) one, so
// on modules before layout assignment (every layout default) it changes
// nothing. Implements XLA's AlignLayouts rule itself (ReshapeIsBitcast is
// hlo/shape_util's).
// Leaves out: tiled layouts and dynamic shapes (such reshapes are left
// alone).
#ifndef HLOGYM_PASSES_EXPANDERS_RESHAPE_DECOMPOSER_H_
#define HLOGYM_PASSES_EXPANDERS_RESHAPE_DECOMPOSER_H_

#include "passes/pass.h"

namespace hlogym {

class ReshapeDecomposer : public Pass {
 public:
  std::string_view name() const override { return "reshape-decomposer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_RESHAPE_DECOMPOSER_H_
