// while-loop-trip-count-annotator: XLA's WhileLoopTripCountAnnotator.
//
// Implements: every while loop whose induction variable is found (see
// while_loop_analysis.h) gets a backend_config (a raw attribute, written as
// XLA's WhileLoopBackendConfig prints to JSON):
//   {"known_trip_count":{"n":"N"},"known_init_step":{"init":"I","step":"S"},
//    "known_induction_variable":{"tuple_index":"K"},"dynamic_variables":[]}
// with known_trip_count when the trip count is known (closed form, or up to
// 128 steps of the loop), known_init_step when the loop is a trivial
// `i = I; i < n; i += S` range, and known_induction_variable always. A loop
// whose backend_config already says the same is left alone.
// Leaves out: the dynamic_variables analysis (always written empty) and
// merging with other fields of an existing backend_config (replaced).
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_

#include "passes/pass.h"

namespace hlogym {

class WhileLoopTripCountAnnotator : public Pass {
 public:
  std::string_view name() const override { return "while-loop-trip-count-annotator"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_TRIP_COUNT_ANNOTATOR_H_
