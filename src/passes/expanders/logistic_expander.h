// logistic-expander: XLA's LogisticExpander (the exp expansion, the only
// one XLA has).
//
// Implements: logistic(x) -> 1 / (1 + exp(-x)), with the 1 a scalar
// constant broadcast to x's shape (one broadcast shared by both uses).
// Leaves out: nothing.
#ifndef HLOGYM_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class LogisticExpander : public Pass {
 public:
  std::string_view name() const override { return "logistic-expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_LOGISTIC_EXPANDER_H_
