// dot_dimension_sorter: XLA's DotDimensionSorter (GPU). A dot whose
// contracting dimensions on one side are consecutive numbers out of order
// ({3,2} or {1,3,2}) gets them in ascending order, the other side's list
// permuted the same way so that the lhs/rhs pairs stay together; the result
// shape is unchanged, so only the dimension numbers change (in place). A dot
// is rewritten when the side to sort is consecutive and unsorted and the
// other side is not consecutive, or when both sides are consecutive and
// unsorted (the lhs then sets the order); a sorted consecutive side is
// never traded for another.
// Layouts: XLA skips dots with an operand whose layout is not the default
// (descending, dim-0-major) one; so does this pass. Operands without a
// layout (hlogym's usual, layout-insensitive modules) count as default, as
// in XLA.
// Leaves out: nothing of XLA's rewrite (fusion computations are not told
// apart: hlogym modules at this stage have none).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_

#include "passes/pass.h"

namespace hlogym {

class DotDimensionSorter : public Pass {
 public:
  std::string_view name() const override { return "dot_dimension_sorter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_DOT_DIMENSION_SORTER_H_
