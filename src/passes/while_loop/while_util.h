// Building while loops: counted loops for the expander passes (the part of
// XLA's WhileUtil::MakeCountedLoop they need), and the pieces the passes that
// rebuild a loop with another state share.
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_UTIL_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_UTIL_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym {

// Called inside the new body computation with the s32 induction variable and
// the loop state (one instruction per init value); returns the next state,
// with the same shapes.
using CountedLoopBody = std::function<absl::StatusOr<std::vector<Instruction*>>(
    Instruction* induction_variable, const std::vector<Instruction*>& state)>;

// Adds to `computation` a while loop over the state (i, init_values...) that
// runs `body` for i = first .. first+trip_count-1: condition "while_cond" (i <
// first + trip_count) and body "while_body" (the state from `body`, i + 1) are
// new computations of the module, each also holding XLA's unused placeholder
// root (zeros of its result shape). Returns get-tuple-elements of the loop's
// final state, one per init value. (`first` is for the loops XLA's expanders
// write with its builder library counting from 1.)
absl::StatusOr<std::vector<Instruction*>> MakeCountedLoop(
    Computation* computation, int64_t trip_count, const std::vector<Instruction*>& init_values,
    const CountedLoopBody& body, int64_t first = 0);

// Element `index` of a while loop's init (its operand): the init tuple's
// operand when it is a tuple, else a get-tuple-element of it.
absl::StatusOr<Instruction*> InitElement(Instruction* init, int64_t index);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_UTIL_H_
