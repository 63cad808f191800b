// Shared helpers of the control-flow passes (simplify-while-loops,
// while-loop-invariant-code-motion, while-loop-constant-sinking,
// while-loop-trip-count-annotator, simplify-conditional, ...): the induction
// variable and trip count of a while loop as XLA's while_loop_analysis finds
// them, the invariant tuple elements of a loop body, and inlining a
// computation's instructions at a point of another computation.
#ifndef HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_ANALYSIS_H_
#define HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/query.h"

namespace hlogym {

// The tuple index of the loop's induction variable: the one element the
// condition's root compares (through a get-tuple-element of the condition's
// parameter) and that the body's root tuple updates from its own previous
// value. nullopt when there is no such single element.
std::optional<int64_t> GetLoopInductionVarTupleIdx(const Instruction* while_op);

// A loop `for (i = init; cond(i); i += step)` recognised without running it.
struct TrivialLoopRange {
  int64_t induction_index = 0;
  int64_t init = 0;
  int64_t step = 0;
  int64_t trip_count = 0;
};
// The range when the init is a constant scalar integer, the update adds a
// constant step, and the condition compares the variable with a constant
// (LT/LE for a positive step, GT/GE for a negative one); nullopt otherwise.
std::optional<TrivialLoopRange> MatchTrivialLoopRange(const Instruction* while_op);

// The exact number of iterations, when the induction variable's start is a
// constant expression and the condition and update depend on it alone:
// closed form for trivial loops, else by stepping the loop at most
// `max_brute_force_iters` times (XLA's default is 128).
std::optional<int64_t> ComputeWhileLoopTripCount(const Instruction* while_op,
                                                 int64_t max_brute_force_iters = 128);

// An upper bound on the number of iterations: the exact count where known,
// else 1 where the condition reads a single element that the body sets to a
// constant the condition is false at; nullopt otherwise.
std::optional<int64_t> ComputeWhileLoopTripCountUpperBound(const Instruction* while_op);

// Get-tuple-elements of the body's parameter whose element the body's root
// tuple passes through unchanged (XLA's GetInvariantGTEsForWhileBody), in
// instruction order. Empty when the root is not a tuple.
std::vector<Instruction*> GetInvariantGtesForWhileBody(const Computation& body);

// Copies the instructions of `callee` reachable from its root (and its
// control edges) into `target`, with `arguments[i]` standing for parameter
// i; returns the copy of the root. New names derive from the callee's.
absl::StatusOr<Instruction*> InlineComputation(Computation* target, const Computation& callee,
                                               const std::vector<Instruction*>& arguments);

// Gives `while_op` its own copy of its body and of its condition where another
// instruction calls them too, so that edits change this loop alone; the body
// is copied first. Whether anything was.
bool UnshareLoopComputations(Module& module, Instruction* while_op);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_WHILE_LOOP_ANALYSIS_H_
