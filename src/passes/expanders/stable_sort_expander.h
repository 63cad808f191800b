// stable-sort-expander: XLA's StableSortExpander. A sort with is_stable=true
// becomes an unstable sort whose comparator breaks ties with an S32 iota
// along the sort dimension: an operand that is already such an iota is
// reused, otherwise an iota is appended as a new last operand (the
// comparator gets two more S32 parameters, and the old result is rebuilt
// from the new sort's elements with get-tuple-element and, for several
// operands, a tuple). The comparator `c` becomes
//   select(c(a, b) == c(b, a), iota_a < iota_b, c(a, b))
// where c(b, a) is a copy of c's instructions with each lhs/rhs parameter
// pair swapped: two elements that neither precedes the other keep their
// original order.
// Differences from XLA: every rewritten sort gets its own copy of the
// comparator (XLA edits a reused-iota sort's comparator in place, which
// would also change other sorts calling it); comparators the rewrite leaves
// uncalled are removed. Sorts whose sort dimension has more than 2^31-1
// elements are an error, as in XLA.
// Layouts: a new iota takes the first operand's shape (layout included)
// with element type S32; comparator scalars get the default layout when the
// comparator's values have one.
#ifndef HLOGYM_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class StableSortExpander : public Pass {
 public:
  std::string_view name() const override { return "stable-sort-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_STABLE_SORT_EXPANDER_H_
