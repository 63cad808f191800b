// broadcast_canonicalizer: XLA's BroadcastCanonicalizer. A broadcast with
// unsorted dimensions becomes a broadcast with sorted dimensions followed
// by the transpose that restores the original result:
//   broadcast(x), dimensions={2,0} ->
//   transpose(broadcast(x), dimensions={0,2}), dimensions=<permutation>
// Leaves out nothing of XLA's pass.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_BROADCAST_CANONICALIZER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_BROADCAST_CANONICALIZER_H_

#include "passes/pass.h"

namespace hlogym {

class BroadcastCanonicalizer : public Pass {
 public:
  std::string_view name() const override { return "broadcast_canonicalizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_BROADCAST_CANONICALIZER_H_
