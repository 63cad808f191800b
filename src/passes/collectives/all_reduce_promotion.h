// all-reduce-promotion: XLA's AllReducePromotion, a ChangeOpDataType over
// all-reduce and reduce-scatter. "all-reduce-promotion" is XLA's CPU
// configuration (bf16 -> f32); "all-reduce-promotion-gpu" its GPU one
// (u16 -> u32, s16 -> s32).
//
// Implements: an array-shaped all-reduce or reduce-scatter whose operands
// have a promoted type gets converted operands, a copy computing in the wider
// type whose reducer is a new computation `<reducer>_promoted` applying the
// old reducer root's opcode to two wider scalars, and a convert back.
// Leaves out: reducers that are not one binary op of their two parameters
// (XLA would rebuild them from the root's opcode alone, changing what they
// compute); hlogym leaves those collectives alone. Tuple-shaped (variadic)
// ones are left alone as in XLA.
#ifndef HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_PROMOTION_H_
#define HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_PROMOTION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "passes/pass.h"

namespace hlogym {

std::unique_ptr<Pass> MakeAllReducePromotion(
    std::string name, std::vector<std::pair<PrimitiveType, PrimitiveType>> from_to);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_COLLECTIVES_ALL_REDUCE_PROMOTION_H_
