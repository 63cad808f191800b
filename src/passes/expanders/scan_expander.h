// scan_expander: XLA's ScanExpander (the CPU pipeline's instance, which
// expands associative scans too), scan -> counted while loop.
//
// Implements, for every scan with at least one input (see
// hlo/scan_attributes.h for the op): a while loop over the state (s64 index,
// carries..., inputs..., output arrays...) whose condition
// `<scan>_condition` is index < length and whose body `<scan>_body` slices
// each input at the index (dynamic-slice of size 1 on the scan dimension +
// reshape; for is_reverse=true the position is length-1-index), inlines
// to_apply on (slices..., carries...), writes each output into its array
// (reshape + dynamic-update-slice) and steps the index by one. The output
// arrays start as broadcast zeros; the scan is replaced by the tuple of
// (output arrays..., final carries...) read from the loop (or its element
// 0 when the scan returns one value).
// Leaves out: scans without inputs (their length comes from an attribute
// hlogym does not read) and scans over a dynamic dimension; both are left
// alone. The GPU variant that keeps associative scans is not registered.
#ifndef HLOGYM_PASSES_EXPANDERS_SCAN_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_SCAN_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class ScanExpander : public Pass {
 public:
  std::string_view name() const override { return "scan_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_SCAN_EXPANDER_H_
