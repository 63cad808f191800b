// rng-expander: XLA's RngExpander.
//
// Implements: every `rng` (rng_uniform, rng_normal) becomes
//   key   = custom-call GetRngSeed() ^ ((unique id * 0x9E3779B97F4A7C15) >> 32)
//   state = rng-get-and-update-state(delta = the 32-bit words drawn)
//   call(key, state, a, b) to a generated computation (one per distribution
//   and shapes) that draws Philox bits for the 128-bit counter `state` and
//   shapes them: uniform floats from the top mantissa-width bits scaled to
//   [a, b), uniform integers as a + (bits mod (b - a)) in XLA's two-step
//   form, normal floats by Box-Muller on a split [0, 1) array, then
//   a + b * z. f16/bf16 draws are f32 draws converted back, as in XLA.
// The evaluator computes `rng` exactly this way (src/eval/rng.cc), so the
// expansion is checked by equivalence. The op-id mix is emitted as one
// constant (XLA emits the multiply and shift and constant-folds them later);
// replica and partition ids are taken as 0 (single replica, SPMD), so the
// xor with them is left out.
// Leaves out: result types XLA cannot expand either (8/16-bit integers,
// pred, complex, rng_normal on integers): the pass fails with
// InvalidArgument naming the instruction.
#ifndef HLOGYM_PASSES_EXPANDERS_RNG_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_RNG_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class RngExpander : public Pass {
 public:
  std::string_view name() const override { return "rng-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_RNG_EXPANDER_H_
