// operand_upcaster: XLA's OperandUpcaster.
//
// Implements: a dot or convolution whose result element type is at least as
// precise as the type its operands would give it (the higher-precision of the
// two operand types, XLA's HigherPrecisionType) and that mixes types gets
// each operand whose type differs from the result's converted to the result
// type, e.g. dot(bf16, bf16) -> f32 becomes dot(convert-f32, convert-f32).
// Leaves out: sparse dots (hlogym has none) and ragged/scaled dots, which
// XLA's pass does not match either.
#ifndef HLOGYM_PASSES_OPERAND_UPCASTER_H_
#define HLOGYM_PASSES_OPERAND_UPCASTER_H_

#include "hlo/primitive_type.h"
#include "passes/pass.h"

namespace hlogym {

// XLA's primitive_util::HigherPrecisionType: complex over real, then float
// range (overflow exponent), then float precision (significand bits), then
// bit width, then signed over unsigned. Ties go to `a`.
PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b);

class OperandUpcaster : public Pass {
 public:
  std::string_view name() const override { return "operand_upcaster"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_OPERAND_UPCASTER_H_
