// Seeded random inputs and the equivalence checker: run two modules on the
// same inputs and compare their outputs (exact for integers and pred, within
// a tolerance for floats, NaN equal to NaN, infinities must match).
#ifndef HLOGYM_EVAL_EQUIVALENCE_H_
#define HLOGYM_EVAL_EQUIVALENCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/evaluator.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

struct RandomInputOptions {
  // Floats uniform in [float_low, float_high]; with positive_floats, in
  // [0.5, 1.5] instead (for graphs that take log/sqrt/rsqrt of inputs).
  // Parameters that reach a log/sqrt/rsqrt through elementwise and shape ops
  // (a batch-norm variance) are always drawn from [0.5, 1.5].
  double float_low = -1.0;
  double float_high = 1.0;
  bool positive_floats = false;
  // Integers uniform in [int_low, int_high] (clipped to the type), except
  // parameters used as indices (gather/scatter indices, dynamic-slice and
  // dynamic-update-slice starts), which stay in [0, smallest indexed dim).
  int64_t int_low = 0;
  int64_t int_high = 7;
};

// One argument per entry parameter, deterministic per seed, parameter
// number and element type (tuples element-wise, tokens empty).
std::vector<Literal> MakeRandomArguments(const Module& module, uint64_t seed,
                                         const RandomInputOptions& options = {});

struct EquivalenceOptions {
  uint64_t seed = 0;
  int trials = 1;  // trial t uses seed + t
  // Floats match when |a - b| <= atol' + rtol * max(|a|, |b|), where atol'
  // is at least rtol times the largest finite magnitude in the array.
  double rtol = 1e-3;
  double atol = 1e-5;
  // The tolerance for f16/bf16 elements (at least this rtol/atol), and the
  // absolute tolerance of an f16/bf16 array is at least low_precision_rtol
  // times its largest finite magnitude (bf16 errors grow with the scale of
  // the values they went through, not of the element itself).
  double low_precision_rtol = 2e-2;
  double low_precision_atol = 1e-2;
  // Gives every float output the low-precision tolerance: set by
  // CheckEquivalent when either module computes in f16/bf16/f8 anywhere,
  // since then f32 outputs carry bf16 rounding too, and passes XLA runs
  // (simplify-fp-conversions, float normalization) legitimately change it.
  bool computes_in_low_precision = false;
  // When the outputs miss the original's, take a second look against the
  // original computed in f64 (WidenedToF64, same inputs), the closest thing to
  // the exact answer the evaluator has:
  //  - the optimized module agrees with it: equivalent (it rounds differently;
  //    for bf16 graphs that is the excess precision XLA allows, and its own
  //    pipeline normalizes bf16 arithmetic to f32), and the result says so;
  //  - it does not, but the original does not either: the graph amplifies
  //    rounding so much on these inputs (deep nets with random weights, argmax
  //    near ties) that no comparison can tell; the result is not judged;
  //  - otherwise the original is accurate and the optimized module is not:
  //    not equivalent.
  bool f64_reference = true;
  RandomInputOptions inputs;
  EvaluatorOptions evaluator;
};

struct EquivalenceResult {
  bool equivalent = true;
  // For a mismatch: which trial, the tuple index path of the output, the
  // linear element index (-1 for a shape mismatch) and both values as text.
  int trial = -1;
  std::vector<int64_t> output_index;
  int64_t element_index = -1;
  std::string value_a;
  std::string value_b;
  // A one-line explanation ("" when equivalent).
  std::string message;
  // Largest relative error seen over float elements (for reporting).
  double max_relative_error = 0;
  // Equivalent only by the second look against the original in f64.
  bool by_f64_reference = false;
  // Not judged (equivalent is false): the original itself misses its f64
  // reference on these inputs; the reason says where.
  bool judged = true;
};

// Errors (status) only when a module cannot be evaluated; different entry
// signatures or outputs are a non-equivalent result.
absl::StatusOr<EquivalenceResult> CheckEquivalent(const Module& a, const Module& b,
                                                  const EquivalenceOptions& options = {});

// Whether any instruction of `module` produces an f16/bf16/f8 value (then
// CheckEquivalent gives every float output the low-precision tolerance).
bool ComputesInLowPrecision(const Module& module);

// `module` with every bf16/f16/f32 value (parameters, constants, results of
// every computation) made f64: what it computes with (nearly) no rounding.
// Null when the module reinterprets bits (bitcast-convert), which widening
// would change.
std::unique_ptr<Module> WidenedToF64(const Module& module);

// Compares two output literals as CheckEquivalent does.
EquivalenceResult CompareLiterals(const Literal& a, const Literal& b,
                                  const EquivalenceOptions& options = {});

// A short text digest of an output: per array leaf its index path, shape,
// a 64-bit hash of the bytes, sum, min, max and NaN count.
std::string DigestLiteral(const Literal& literal);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_EQUIVALENCE_H_
