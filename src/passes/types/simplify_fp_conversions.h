// simplify-fp-conversions: XLA's SimplifyFPConversions. A chain of two or
// more converts producing floating-point types, x -> T1 -> ... -> Tn, is
// replaced by one convert x -> Tn, or by x itself when x already has type
// Tn. (This drops intermediate roundings on purpose, as XLA's pass does; it
// is not value-preserving in general, which is why XLA only runs it where
// the extra precision is acceptable.)
// Leaves out nothing of XLA's pass.
#ifndef HLOGYM_PASSES_TYPES_SIMPLIFY_FP_CONVERSIONS_H_
#define HLOGYM_PASSES_TYPES_SIMPLIFY_FP_CONVERSIONS_H_

#include "passes/pass.h"

namespace hlogym {

class SimplifyFpConversions : public Pass {
 public:
  std::string_view name() const override { return "simplify-fp-conversions"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_TYPES_SIMPLIFY_FP_CONVERSIONS_H_
