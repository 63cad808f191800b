// real_imag_expander: XLA's RealImagExpander.
//
// Implements: real(x) of a non-complex x is x itself; imag(x) of a
// non-complex x is a zero of x's type broadcast to the result shape.
// Leaves out: nothing (real/imag of complex operands are never touched).
#ifndef HLOGYM_PASSES_EXPANDERS_REAL_IMAG_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_REAL_IMAG_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class RealImagExpander : public Pass {
 public:
  std::string_view name() const override { return "real_imag_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_REAL_IMAG_EXPANDER_H_
