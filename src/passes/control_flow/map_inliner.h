// map-inline: XLA's MapInliner.
//
// Implements: a map whose to_apply is a single instruction over the
// parameters is replaced by that instruction applied to the map's operands:
//  - root is an elementwise op whose operands are all parameters: the same
//    op on the corresponding map operands (result shape of the map);
//  - root is a parameter: the map becomes that operand;
//  - root is a constant: the map becomes a broadcast of it.
// Leaves out: maps over computations with more than one non-parameter
// instruction (left as maps, as XLA does).
#ifndef HLOGYM_PASSES_CONTROL_FLOW_MAP_INLINER_H_
#define HLOGYM_PASSES_CONTROL_FLOW_MAP_INLINER_H_

#include "passes/pass.h"

namespace hlogym {

class MapInliner : public Pass {
 public:
  std::string_view name() const override { return "map-inline"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CONTROL_FLOW_MAP_INLINER_H_
