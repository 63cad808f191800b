// associative-scan-rewriter: XLA's AssociativeScanRewriter (base length 16,
// the CPU pipeline's xla_reduce_window_rewrite_base_length), associative
// scans -> cumulative reduce-windows.
//
// Implements: a scan marked is_associative=true with one input and one
// carry, whose to_apply has two parameters and returns tuple(x, x) (the
// output is the new carry), whose users are get-tuple-elements or dead, that
// runs forward and whose final carry (element 1) is unused, whose init is a
// scalar or a uniform constant seen through broadcasts, reshapes and
// same-type bitcasts, and whose to_apply can be scalarized (every
// instruction elementwise, a tuple, a get-tuple-element, a reshape, a
// same-type bitcast, a broadcast of a scalar or a scalar/uniform constant),
// becomes tuple(reduce-window, init): the reduce-window runs over the input
// with a window of the whole scan dimension and low padding length-1, seeded
// with the scalar init, applying `<to_apply>_rw_wrapper` (carry, input) ->
// element 1 of a call of the scalarized to_apply on (input, carry). When the
// scan dimension is longer than the base length the reduce-window is split
// in two levels as reduce-window-rewriter does, which XLA allows only when
// folding the init twice is harmless (to_apply's x is min/max, or add/or/xor
// with a zero init, or multiply with a zero or one init); other long scans
// are left for scan_expander.
// Leaves out: dynamic scan dimensions (hlogym's scan support has none).
#ifndef HLOGYM_PASSES_EXPANDERS_ASSOCIATIVE_SCAN_REWRITER_H_
#define HLOGYM_PASSES_EXPANDERS_ASSOCIATIVE_SCAN_REWRITER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class AssociativeScanRewriter : public Pass {
 public:
  explicit AssociativeScanRewriter(int64_t base_length = 16) : base_length_(base_length) {}
  std::string_view name() const override { return "associative-scan-rewriter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t base_length_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_ASSOCIATIVE_SCAN_REWRITER_H_
