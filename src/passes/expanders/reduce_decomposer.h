// reduce-decomposer: XLA's ReduceDecomposer with no custom-layout predicate
// (XLA's GPU pipeline passes one that keeps reductions its emitter handles;
// that predicate is device-specific and left out). Two steps:
//  - the inputs of a variadic reduce get the first input's layout (copies
//    are inserted where they differ);
//  - a reduce whose result layout is not the input layout with the reduced
//    dimensions deleted becomes reduce(...) with that layout followed by a
//    copy to the original layout (one copy per output of a variadic reduce,
//    regrouped by a tuple).
// Shapes without a layout count as having the default one, so on modules
// before layout assignment it changes nothing.
#ifndef HLOGYM_PASSES_EXPANDERS_REDUCE_DECOMPOSER_H_
#define HLOGYM_PASSES_EXPANDERS_REDUCE_DECOMPOSER_H_

#include "passes/pass.h"

namespace hlogym {

class ReduceDecomposer : public Pass {
 public:
  std::string_view name() const override { return "reduce-decomposer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_REDUCE_DECOMPOSER_H_
