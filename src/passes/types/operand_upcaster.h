// operand_upcaster: XLA's OperandUpcaster.
//
// Implements: a dot or convolution whose result element type is at least as
// precise as the type its operands would give it (the higher-precision of the
// two operand types, XLA's HigherPrecisionType) and that mixes types gets
// each operand whose type differs from the result's converted to the result
// type, e.g. dot(bf16, bf16) -> f32 becomes dot(convert-f32, convert-f32).
// As XLA's CPU compiler configures it (cpu_library_filter), a dot that XLA:CPU
// gives YNNPACK keeps its operands (YnnTakesDot: a bf16 x bf16 -> f32 matrix
// product stays one); the GPU pipeline runs the same pass, where XLA's own
// filter skips matrix products too.
// Leaves out: sparse dots (hlogym has none) and ragged/scaled dots, which
// XLA's pass does not match either.
#ifndef HLOGYM_PASSES_TYPES_OPERAND_UPCASTER_H_
#define HLOGYM_PASSES_TYPES_OPERAND_UPCASTER_H_

#include "hlo/primitive_type.h"
#include "passes/pass.h"

namespace hlogym {

// XLA's primitive_util::HigherPrecisionType: complex over real, then float
// range (overflow exponent), then float precision (significand bits), then
// bit width, then signed over unsigned. Ties go to `a`.
PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b);

class OperandUpcaster : public Pass {
 public:
  explicit OperandUpcaster(bool cpu_library_filter = true)
      : cpu_library_filter_(cpu_library_filter) {}
  std::string_view name() const override { return "operand_upcaster"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  bool cpu_library_filter_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_OPERAND_UPCASTER_H_
