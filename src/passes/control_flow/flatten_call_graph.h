// flatten-call-graph: XLA's FlattenCallGraph, as the pinned XLA (jaxlib
// 0.10.2) behaves on the corpus.
//
// Implements: every computation with more than one call site is cloned so
// each site has its own copy; the first site (module order, then instruction
// order) keeps the original. This covers control-flow sites (call, while,
// conditional, async ops) and, like the pinned XLA, embedded ones too: a
// reducer shared by a reduce-window and a reduce (as tree_reduction_rewriter
// leaves them) or by two reduces is split (the corpus's XLA pass pairs and
// its pipeline traces show these clones; older XLA skipped embedded sites).
// Computations that a clone calls from control-flow sites are cloned with it.
// One instruction calling a computation twice is one site. Computations are
// visited callees first, like XLA's call graph walk; the module is then
// reordered so callees precede callers. Reports "changed" only when it cloned
// something (XLA's pass always says true).
// Leaves out: execution threads (hlogym has one).
#ifndef HLOGYM_PASSES_CONTROL_FLOW_FLATTEN_CALL_GRAPH_H_
#define HLOGYM_PASSES_CONTROL_FLOW_FLATTEN_CALL_GRAPH_H_

#include "passes/pass.h"

namespace hlogym {

class FlattenCallGraph : public Pass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_FLATTEN_CALL_GRAPH_H_
