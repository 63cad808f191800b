// ragged-all-to-all-canonicalizer: XLA's RaggedAllToAllCanonicalizer (GPU
// compiler, first pass of its "collective-optimizations" pipeline).
//
// Implements: a ragged-all-to-all whose offset and size operands (operands 2
// to 5) are not s64 gets each of them wrapped in a convert to s64; the new
// ragged-all-to-all keeps every attribute of the old one (XLA rebuilds it with
// only its replica groups and channel id; hlogym keeps metadata and the
// rest too, which does not change what it computes). One whose operand 2 is
// already s64 is left alone, as in XLA.
// Errors (naming the instruction): fewer than three operands, or an offset or
// size operand that is not an integer array.
#ifndef HLOGYM_PASSES_COLLECTIVES_RAGGED_ALL_TO_ALL_CANONICALIZER_H_
#define HLOGYM_PASSES_COLLECTIVES_RAGGED_ALL_TO_ALL_CANONICALIZER_H_

#include "passes/pass.h"

namespace hlogym {

class RaggedAllToAllCanonicalizer : public Pass {
 public:
  std::string_view name() const override { return "ragged-all-to-all-canonicalizer"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_RAGGED_ALL_TO_ALL_CANONICALIZER_H_
