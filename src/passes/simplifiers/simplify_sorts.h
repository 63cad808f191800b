// simplify-sorts: XLA's SortSimplifier.
//
// Implements: a variadic sort whose users are all get-tuple-elements and
// some of whose outputs are unused (and whose comparator does not read the
// parameters of those outputs) is replaced by a sort of just the used
// operands, with a comparator reduced to the matching parameters; the
// get-tuple-element users are renumbered, or replaced by the sort itself
// when a single operand remains.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_SIMPLIFY_SORTS_H_
#define HLOGYM_PASSES_SIMPLIFIERS_SIMPLIFY_SORTS_H_

#include "passes/pass.h"

namespace hlogym {

class SortSimplifier : public Pass {
 public:
  std::string_view name() const override { return "simplify-sorts"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_SIMPLIFY_SORTS_H_
