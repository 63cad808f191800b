// select_and_scatter_expander: XLA's SelectAndScatterExpander.
//
// Implements: select-and-scatter(operand, source, init) ->
//   scatter(broadcast(init), indices, source) with the scatter computation,
// where the indices come from a variadic reduce-window (same window) over
// the operand and one s32 iota per operand dimension, with init values
// (init, -1, ..., -1). Its reducer (a new computation named
// "<select>.reduce_window", with the select computation inlined into it)
// keeps the left element, with its position, when select(lhs, rhs) holds
// and the left one is a real element (iota != -1), or when the right one is
// padding. The winning positions, reshaped to [..., 1] and concatenated,
// index the scatter (update_window_dims={}, every dimension inserted,
// index_vector_dim = rank). Windows made only of padding get index -1 and
// are dropped by the scatter's bounds check, as in XLA.
// Leaves out: rank-0 select-and-scatter (XLA cannot expand it either; it is
// left alone).
#ifndef HLOGYM_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class SelectAndScatterExpander : public Pass {
 public:
  std::string_view name() const override { return "select_and_scatter_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_SELECT_AND_SCATTER_EXPANDER_H_
