// control-dep-rewriter: XLA's ControlDepRewriter (run in the CPU compiler's
// "sharding-removal" pipeline).
//
// Implements: a custom call with target "control_dep" and two operands
// (src, dst), the way a frontend asks for "src runs before dst", becomes a
// control edge src -> dst and is removed, in every computation. Reports
// "changed" whenever it found one.
// Errors (naming the custom call, checked before anything is rewritten)
// where XLA would crash or fail: not exactly two operands, a control_dep
// that is used or is the root, src == dst, or an edge that would close a
// cycle (src already depends on dst through operands or control edges).
// Leaves out: nothing.
#ifndef HLOGYM_PASSES_CONTROL_FLOW_CONTROL_DEP_REWRITER_H_
#define HLOGYM_PASSES_CONTROL_FLOW_CONTROL_DEP_REWRITER_H_

#include "passes/pass.h"

namespace hlogym {

class ControlDepRewriter : public Pass {
 public:
  std::string_view name() const override { return "control-dep-rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_CONTROL_DEP_REWRITER_H_
