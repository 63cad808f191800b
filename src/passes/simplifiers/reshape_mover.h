// reshape-mover: XLA's ReshapeMover. Sinks reshapes and transposes
// ("rearranges") below elementwise instructions so that algsimp can cancel
// them against each other:
//   elementwise(rearrange(a), rearrange(b), c) ->
//     rearrange(elementwise(a, b, inverse_rearrange(c)))
// Implements:
//  - candidates: elementwise instructions (XLA's list, bitcast-convert only
//    when the bit width is kept) with at least one non-trivial rearrange
//    operand, all rearrange operands equivalent (same opcode and dimensions,
//    same operand dimensions for reshapes, same permutation for transposes),
//    and every other operand trivially rearrangeable: a constant, an rng with
//    one user, a broadcast with sorted dimensions that is of a scalar
//    (reshapes; with the 1-d option also of an effective rank-1 operand or
//    one whose broadcast dimensions the reshape leaves alone) or whose
//    dimensions keep their relative order (transposes); nop rearranges count
//    as trivial;
//  - a candidate moves only when every user of each of its rearrange
//    operands is a moving candidate (iterated to a fixed point per
//    computation), so no rearrange gets duplicated;
//  - the inverse rearrange applied to the other operands skips nop
//    reshapes/transposes and reshape(reshape(x)) chains back to x's shape.
// Two registered variants: "reshape-mover" (CPU pipeline, default options)
// and "reshape-mover-1d-broadcast-cheap" (reshape_of_1d_broadcast_is_cheap,
// as XLA's GPU pipeline runs it).
// Leaves out: map (its dimensions attribute would need rewriting), fusion
// computations (none exist before fusion), instructions with control
// dependencies (left alone), sharding handling.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_

#include <string>

#include "passes/pass.h"

namespace hlogym {

struct ReshapeMoverOptions {
  bool reshape_of_1d_broadcast_is_cheap = false;
};

class ReshapeMover : public Pass {
 public:
  explicit ReshapeMover(ReshapeMoverOptions options = {}, std::string name = "reshape-mover")
      : options_(options), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  ReshapeMoverOptions options_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_RESHAPE_MOVER_H_
