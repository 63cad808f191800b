// sub-byte-size-setter: XLA's SubByteNormalization in SET_ELEMENT_SIZE mode,
// the "SubbytePacker pipeline" XLA's CPU compiler runs first.
//
// Implements: every array shape that has a layout, in every instruction of
// every computation and in the module's entry_computation_layout, gets the
// element size E(n) of its type: the bit width for types narrower than a
// byte (s1, s2, s4, u1, u2, u4, f4e2m1fn; pred excluded), none for the rest
// (a stray E(n) is removed). E(n) goes where XLA prints it among the layout
// attributes (after D/T/L/#/*, before S/SC/P/M).
// Leaves out: nothing of XLA's rewrite; the sub-byte-size-removal mode is not
// registered.
#ifndef HLOGYM_PASSES_TYPES_SUB_BYTE_NORMALIZATION_H_
#define HLOGYM_PASSES_TYPES_SUB_BYTE_NORMALIZATION_H_

#include "passes/pass.h"

namespace hlogym {

class SubByteSizeSetter : public Pass {
 public:
  std::string_view name() const override { return "sub-byte-size-setter"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_SUB_BYTE_NORMALIZATION_H_
