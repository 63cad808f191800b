// flatten-call-graph: XLA's FlattenCallGraph.
//
// Implements: every computation called from more than one control-flow call
// site (call, while, conditional, async ops) is cloned so each such site has
// its own copy; the first site keeps the original unless the computation is
// also used in an embedded context (reduce, map, sort, fusion, ...), in
// which case every control-flow site gets a clone. Computations that the
// clones call from control-flow sites are cloned with them. Embedded uses
// are never cloned. Computations are visited callees first, like XLA's call
// graph walk; the module is then reordered so callees precede callers.
// Reports "changed" only when it cloned something (XLA's pass always says
// true).
#ifndef HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_
#define HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_

#include "passes/pass.h"

namespace hlogym {

class FlattenCallGraph : public Pass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_FLATTEN_CALL_GRAPH_H_
