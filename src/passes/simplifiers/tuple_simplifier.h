// tuple-simplifier: XLA's TupleSimplifier (default options: entry
// computation included).
//
// Implements, in every computation, in post order:
//  - get-tuple-element(tuple(a0, ..., an), i) -> ai, also through chains of
//    get-tuple-elements over nested tuples;
//  - tuple(gte(x, 0), gte(x, 1), ..., gte(x, n-1)) -> x when x has exactly n
//    elements and a compatible shape;
//  - operands left dead by either rewrite are removed.
// Instructions with control successors are left alone (their ordering
// constraint would be lost).
// Leaves out: the exclude_entry_computation option and sharding checks (the
// CPU pipeline runs after sharding removal).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace hlogym {

class TupleSimplifier : public Pass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_TUPLE_SIMPLIFIER_H_
