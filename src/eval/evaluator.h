// Reference evaluator: runs a module's entry computation on the CPU.
//
// Semantics follow XLA (what its HloEvaluator / CPU backend compute):
//  - integers wrap around; integer division by zero gives -1 (all ones),
//    remainder by zero gives the dividend, INT_MIN / -1 = INT_MIN; shifts by
//    >= the bit width give 0 (or the sign for arithmetic right shifts);
//  - f16/bf16 arithmetic runs in f32 and is rounded (nearest even) after every
//    op; dot and convolution accumulate f16/bf16 in f32 and round once;
//  - convert saturates float -> int (NaN -> 0); maximum/minimum propagate NaN;
//    compare type=TOTALORDER orders -NaN < -inf < ... < -0 < +0 < ... < NaN;
//  - dynamic-slice / dynamic-update-slice / gather clamp start indices into
//    range; scatter skips a whole update window that does not fit;
//  - conditional with an out-of-range branch index runs the last branch;
//  - reductions combine in row-major order of the reduced elements, in the
//    element type, except f32 sums: they accumulate in f64 and round once
//    (HLO leaves the order to the backend, and XLA's vectorized and tree
//    sums stay within a few ulps of the exact sum, where a sequential f32
//    sum drifts with the count);
//  - collectives have single-replica, single-partition semantics (all-reduce,
//    all-gather, reduce-scatter, all-to-all, collective-permute... return
//    their operand; replica-id and partition-id are 0), except in a module
//    split for several partitions, whose copies run in lockstep and exchange
//    through their cross-partition collectives, and in a module written for
//    several replicas, whose copies exchange through every collective
//    (eval/partitions.h);
//  - rng-bit-generator: XLA's Philox/ThreeFry bit streams, bit for bit
//    (prng.h; rng_default is Philox as on XLA's CPU backend); `rng` is
//    evaluated as XLA's RngExpander expands it, keyed by
//    EvaluatorOptions::rng_seed (what custom-call GetRngSeed returns) and
//    the instruction's unique id, drawing its counter from
//    rng-get-and-update-state's state (rng.cc);
//  - custom-call: "TopK", the public jaxlib kernels (LAPACK potrf/trsm,
//    ThreeFry on GPU), "Qr", "ProductOfElementaryHouseholderReflectors" and
//    "Eigh" (other_ops.cc, qr_custom_calls.cc, eigh_custom_call.cc) are
//    computed for real; every other target is an opaque deterministic function: its outputs (of the
//    declared shape) are filled from a hash of the target name, the backend config and the operand
//    values (floats in [-1, 1], integers in [0, 8));
//  - elided constants (`constant({...})`) have unknown values: they are filled
//    from a hash of the instruction's name and shape (floats in [-1, 1],
//    integers in [0, 8)), so two modules that keep the name see the same
//    values.
//  - dynamic dimensions (`f32[<=8]`) are computed at their bounds (set-dimension-size
//    returns its operand, get-dimension-size the bound), which is not what XLA computes:
//    callers pad a dynamic module first (passes' PaddedToStatic,
//    EquivalenceOptions::static_form), as XLA's interpreter does.
// Unsupported opcodes or types give Unimplemented naming the instruction;
// malformed input gives InvalidArgument. The evaluator never aborts.
#ifndef HLOGYM_EVAL_EVALUATOR_H_
#define HLOGYM_EVAL_EVALUATOR_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/computation.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

// Half the machine's physical memory (8 GiB when it cannot be read).
int64_t DefaultEvaluatorMaxBytes();

// ResourceExhausted when `bytes` more bytes of array data (for what `what`
// names) would pass `max_bytes` given what is allocated now; OK otherwise.
// `what` is called only for the error: the interpreter checks every
// instruction, and a loop of scalars would spend its time naming shapes.
absl::Status CheckMemoryFor(int64_t bytes, int64_t max_bytes,
                            absl::FunctionRef<std::string()> what);

namespace eval {
struct PartitionContext;
}  // namespace eval

struct EvaluatorOptions {
  // Threads for big dots and convolutions (1 = single-threaded).
  int num_threads = 2;
  // A while loop running more iterations than this fails (guards against
  // modules that never terminate).
  int64_t max_while_iterations = 1 << 24;
  // The most instructions one evaluation may run, every iteration of a loop's body and
  // condition counted (0: no limit). Past it the evaluation fails with DeadlineExceeded: a
  // check can then say it cannot judge a module in the time it has, where a loop runs long on
  // random inputs (an adaptive ODE solver given random tolerances runs to its step limit).
  int64_t max_instructions = 0;
  // The seed GetRngSeed returns, which keys `rng` (see rng.cc).
  uint64_t rng_seed = 42;
  // The most bytes of array data the evaluator may hold at once (process-wide,
  // all evaluations together): an instruction whose result would pass it
  // fails with ResourceExhausted naming the instruction and the size, instead
  // of the process running out of memory. Default: half the machine's memory.
  int64_t max_bytes = DefaultEvaluatorMaxBytes();
  // Set by EvaluatePartitions for each partition's copy of a module split
  // for several partitions, or each replica's (eval/partitions.h); null
  // otherwise.
  const eval::PartitionContext* partition = nullptr;
};

// Evaluates the entry computation on `arguments` (one per entry parameter,
// shapes compatible with the parameters').
absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& arguments,
                                 const EvaluatorOptions& options = {});

// Evaluates one computation of a module.
absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<Literal>& arguments,
                                            const EvaluatorOptions& options = {});

// Whether the evaluator implements `opcode` at all (some need particular
// attributes or types as well).
bool EvaluatorSupportsOpcode(Opcode opcode);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_EVALUATOR_H_
