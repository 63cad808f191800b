// computation-deduplicator: XLA's HloComputationDeduplicator (default
// options).
//
// Implements: visiting computations callees first, a computation equal to
// an earlier one (same signature, same instructions with layouts, same
// attributes, calling the same or already-deduplicated computations; names
// ignored) is replaced everywhere by the earlier one and removed. Skipped
// as in XLA: the entry, computations with more than 128 instructions or
// more than 1 KiB of constant data, fusion computations, and computations
// called by collectives.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_COMPUTATION_DEDUPLICATOR_H_
#define HLOGYM_PASSES_SIMPLIFIERS_COMPUTATION_DEDUPLICATOR_H_

#include "passes/pass.h"

namespace hlogym {

class HloComputationDeduplicator : public Pass {
 public:
  std::string_view name() const override { return "computation-deduplicator"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_COMPUTATION_DEDUPLICATOR_H_
