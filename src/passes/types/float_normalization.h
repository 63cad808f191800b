// float-normalization-<type>: XLA's FloatNormalization with the base
// FloatSupport, as XLA's CPU compiler configures it (no oneDNN): bf16 -> f32,
// the f8 formats and f4e2m1fn -> f16, f8e8m0fnu -> f32, s4 -> s8, u4 -> u8.
// That support handles the low-precision type in no computing op; for bf16
// (cpu_library_filter) the pinned XLA's CpuFloatSupport also leaves alone,
// called computations included, the dots, reduces and reduce-windows it hands
// to YNNPACK (YnnTakesDot, YnnTakesReduceLike: a bf16 max pool of 4096
// elements stays bf16).
// Otherwise:
//
// Implements, for every instruction of every computation reachable from the
// entry (callees first) other than tuple, get-tuple-element, constant,
// parameter, domain, fusion, convert, bitcast(-convert), call, custom-call,
// while, conditional, async ops and side-effecting ones:
//  - each low-precision operand gets a convert to the high-precision type
//    (with excess precision allowed, as XLA's default: an operand that is
//    itself a convert from the high type is used unconverted);
//  - a low-precision result is computed in the high type and converted back;
//    users that converted it to the high type use the wide result directly;
//  - called computations (reduce, map, sort, scatter, reduce-window, ...)
//    with low-precision parameters or root are cloned with high-precision
//    parameters (converted back inside) and root;
//  - flat tuple results (variadic reduce, reduce-window) are handled leaf by
//    leaf, as XLA counts and converts subshapes.
// Afterwards, when anything changed, tuple-simplifier and dce run, as in XLA.
// The computations that all-reduce, reduce-scatter and the reduce-likes left to
// YNNPACK call stay as they are (a computation other instructions call too is
// cloned for them first, as in XLA).
// Leaves out: tuple-shaped operands, tuple-shaped sorts and collectives
// (XLA's HandleMultipleOutputs; they are left unchanged).
#ifndef HLOGYM_PASSES_TYPES_FLOAT_NORMALIZATION_H_
#define HLOGYM_PASSES_TYPES_FLOAT_NORMALIZATION_H_

#include <string>

#include "hlo/primitive_type.h"
#include "passes/pass.h"

namespace hlogym {

class FloatNormalization : public Pass {
 public:
  FloatNormalization(PrimitiveType low, PrimitiveType high, bool cpu_library_filter = false);
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  // Names this pass and its options for the module's record of tracked runs.
  std::string TrackingKey() const;

  PrimitiveType low_;
  PrimitiveType high_;
  bool cpu_library_filter_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_FLOAT_NORMALIZATION_H_
