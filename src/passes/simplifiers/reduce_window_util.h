// Reduce-window helpers shared by reduce-window-rewriter and
// reduce-window-resizer (XLA's reduce_window_util).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_UTIL_H_
#define HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym {

// The operands of a (possibly variadic) reduce-window: N inputs, then N inits.
struct ReduceWindowOperands {
  std::vector<Instruction*> inputs;
  std::vector<Instruction*> inits;
};
ReduceWindowOperands SplitReduceWindowOperands(const Instruction* reduce_window);

// A reduce-window of `inputs`/`inits` with `window` and `reducer`, its shape
// inferred, added next to `inputs[0]`.
absl::StatusOr<Instruction*> MakeReduceWindow(const std::vector<Instruction*>& inputs,
                                              const std::vector<Instruction*>& inits,
                                              const Window& window, Computation* reducer);

// The `i`th result of a (possibly variadic) instruction.
absl::StatusOr<Instruction*> ResultElement(Instruction* instruction, int64_t i);

// Replaces `reduce_window` by `results` (a tuple of them when it is variadic).
absl::Status ReplaceReduceWindow(Instruction* reduce_window,
                                 const std::vector<Instruction*>& results);

// A reduce-window over rank-1 inputs becomes reshape to [n, 1] ->
// reduce-window with an extra trivial window dimension -> reshape back.
absl::Status ReplaceRankOneReduceWindowWithReshape(Instruction* reduce_window);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_REDUCE_WINDOW_UTIL_H_
