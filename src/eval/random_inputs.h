// Seeded random inputs for evaluating a module: the one generator behind
// `hlogym run`, the equivalence checker, the gym's validation and the Python
// side (hlogym.xla.Xla.random_inputs calls it through the extension), so the
// same seed gives the same inputs everywhere.
//
// The rules, chosen so that a module computes something meaningful (finite,
// input-dependent outputs) rather than NaN from a negative variance:
//  - floats are uniform in [float_low, float_high] (default [-1, 1]);
//  - a float parameter that reaches, through value-preserving ops (convert,
//    reshape, broadcast, copy, slice, concatenate, transpose, add,
//    dynamic-slice; for this rule also multiply and a dividend), into called
//    computations and out of them again (from a fusion's result to the next
//    fusion) and through while loops' state (lax.scan's carry), the operand
//    of sqrt, rsqrt or log, the divisor of a
//    divide, the base of a power or a batch norm's variance is uniform in
//    [0.5, 1.5] instead (a batch-norm variance, Adam's second moment, a
//    scale, a norm), and so is
//    a float scalar parameter: a step count, a learning rate, a time or a
//    scale, positive in every model, where a negative one turns a bias
//    correction (1 - 0.999^t) or a schedule negative and every output NaN;
//  - a float parameter that reaches an operand of a dot or convolution (a
//    weight, or the data it multiplies) the same way is uniform in
//    [-1, 1] * sqrt(3 / fan-in), fan-in being the number of products each
//    output sums (the largest such use): a LeCun-uniform initialization, so
//    that a layer keeps its input's scale and deep nets neither overflow nor
//    amplify rounding until no comparison can tell (fan-in <= 3 keeps [-1, 1]);
//  - integers are uniform in [int_low, int_high] (default [0, 7], clipped to
//    the type), except those that reach an index operand (gather and scatter
//    indices, dynamic-slice and dynamic-update-slice starts; also through the
//    values a gather picks, a minibatch shuffled by x[order]), which stay in
//    [0, smallest dimension of what they index), and those compared with an
//    iota (a class label made one-hot; TensorFlow's sparse cross-entropy gives
//    NaN for a label out of range), which stay in [0, the iota's size), and
//    those that reach the divisor of a divide or remainder (through converts,
//    bit casts, shape ops, sums and a difference's left side: torch.randint's
//    bound), which start at 1;
//  - pred is a fair coin; complex numbers draw both parts as floats;
//  - each parameter draws from its own stream, keyed by the seed, its
//    parameter number and element type (tuple elements from sub-streams), so
//    adding a parameter does not change the others.
#ifndef HLOGYM_EVAL_RANDOM_INPUTS_H_
#define HLOGYM_EVAL_RANDOM_INPUTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/evaluator.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

struct RandomInputOptions {
  double float_low = -1.0;
  double float_high = 1.0;
  // Every float in [0.5, 1.5] (`hlogym run --positive`).
  bool positive_floats = false;
  int64_t int_low = 0;
  int64_t int_high = 7;
  // The arguments may take at most this many bytes (with what the evaluator
  // holds now): ResourceExhausted naming the parameter otherwise.
  int64_t max_bytes = DefaultEvaluatorMaxBytes();
};

// One argument per entry parameter, deterministic per seed (see above).
absl::StatusOr<std::vector<Literal>> MakeRandomArguments(const Module& module, uint64_t seed,
                                                         const RandomInputOptions& options = {});

}  // namespace hlogym

#endif  // HLOGYM_EVAL_RANDOM_INPUTS_H_
