// result_caster: XLA's ResultCaster.
//
// Implements: a dot or convolution whose result element type is less
// precise than the type its operands give it (the higher-precision of the
// two operand types) is computed in that type and converted to the requested
// one: dot(f32, f32) -> bf16 becomes convert-bf16(dot(f32, f32) -> f32).
// Leaves out: nothing (results wider than the operands are operand_upcaster's).
#ifndef HLOGYM_PASSES_TYPES_RESULT_CASTER_H_
#define HLOGYM_PASSES_TYPES_RESULT_CASTER_H_

#include "passes/pass.h"

namespace hlogym {

class ResultCaster : public Pass {
 public:
  std::string_view name() const override { return "result_caster"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_RESULT_CASTER_H_
