// dynamic-index-splitter: XLA's DynamicIndexSplitter.
//
// Implements: a dynamic-slice or dynamic-update-slice whose start indices are
// one rank-1 vector (the old single-operand form) gets one scalar index per
// operand dimension instead, each a slice [d:d+1] of the vector reshaped to a
// scalar; a dynamic-slice of a rank-0 operand is replaced by its operand and
// a dynamic-update-slice of a rank-0 operand by its update.
// Leaves out: nothing (fusion computations are not visited, as in XLA).
#ifndef HLOGYM_PASSES_EXPANDERS_DYNAMIC_INDEX_SPLITTER_H_
#define HLOGYM_PASSES_EXPANDERS_DYNAMIC_INDEX_SPLITTER_H_

#include "passes/pass.h"

namespace hlogym {

class DynamicIndexSplitter : public Pass {
 public:
  std::string_view name() const override { return "dynamic-index-splitter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_DYNAMIC_INDEX_SPLITTER_H_
