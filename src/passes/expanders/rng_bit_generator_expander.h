// rng-bit-generator-expander: XLA's RngBitGeneratorExpander with the CPU
// backend's default algorithm (Philox).
//
// Implements: every rng-bit-generator becomes a call to a generated
// computation (one per algorithm, state shape and result shape) that
// computes the same (new state, bits) in plain HLO: Philox4x32-10 for
// rng_philox and rng_default, ThreeFry2x32-20 for rng_three_fry, for 8, 16,
// 32 and 64-bit integer results, with the state layouts XLA uses (u64[2] or
// u64[3] for Philox, u64[2] for ThreeFry; see src/eval/prng.h). The bits are
// the ones XLA's CPU backend produces for the same state.
// Leaves out: states of other shapes or types and non-integer results (XLA
// rejects them too): the pass fails with InvalidArgument naming the
// instruction rather than emitting a wrong expansion. XLA builds its
// computation with XlaBuilder (different instruction mix and names); the
// values are the same.
#ifndef HLOGYM_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class RngBitGeneratorExpander : public Pass {
 public:
  std::string_view name() const override { return "rng-bit-generator-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_RNG_BIT_GENERATOR_EXPANDER_H_
