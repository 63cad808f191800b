// The equivalence checker: run two modules on the same seeded random inputs
// (eval/random_inputs.h) and compare their outputs (exact for integers and pred, within
// a tolerance for floats, NaN equal to NaN, infinities must match).
#ifndef HLOGYM_EVAL_EQUIVALENCE_H_
#define HLOGYM_EVAL_EQUIVALENCE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/evaluator.h"
#include "eval/random_inputs.h"
#include "hlo/literal.h"
#include "hlo/module.h"

namespace hlogym {

struct EquivalenceOptions {
  uint64_t seed = 0;
  // Trial t draws its inputs from seed + t; where the original's outputs are vacuous on them
  // (VacuousOutputReason), it draws again from another seed, then with integers in {0, 1}
  // (EquivalenceReference::Make), and keeps the first draw whose outputs say something.
  int trials = 1;
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
  //  - the original is accurate and the optimized module is not, but the
  //    optimized module computed in f64 too gives the original's f64 result:
  //    both compute the same function and f32 rounding puts a value on the
  //    other side of a threshold (a ReLU's 0 within rounding); not judged;
  //  - otherwise the original is accurate and the optimized module is not:
  //    not equivalent.
  bool f64_reference = true;
  // The static form of a module with dynamic dimensions (`f32[<=8]`), which
  // is what gets evaluated: the evaluator computes static shapes only (a
  // dynamic dimension at its bound), so a dynamic module is judged through
  // its dimensions padded as XLA's DynamicPadder pads them, as XLA's own
  // interpreter does (the gym sets passes' PaddedToStatic here). Without it,
  // or where it fails on the original, a dynamic module is not judged; where
  // it fails on the other module only, that module is not equivalent.
  std::function<absl::StatusOr<std::unique_ptr<Module>>(const Module&)> static_form;
  // A copy of a module whose reductions sum in another order XLA may take (the gym sets passes'
  // SumsReordered, tree_reduction_rewriter's split, here). For the last look before a
  // rejection: where the original itself, summing in that order, misses its own outputs, the
  // order of its sums decides them on these inputs (XLA:CPU runs tree_reduction_rewriter on
  // every module it compiles, and a selection at a threshold, an evolution strategy's best,
  // follows the rounding), so the check is not judged. Without it that look is not taken.
  std::function<absl::StatusOr<std::unique_ptr<Module>>(const Module&)> sums_reordered;
  // The most instructions one evaluation of the check may run, loop iterations counted
  // (EvaluatorOptions::max_instructions; 0: no limit). A module that needs more on these inputs
  // is not judged, the message says so: an adaptive ODE solver given random tolerances runs to
  // its step limit (dynamiqs's Lindblad solve: 202 million instructions, 77 s here), which no
  // check should wait for. The largest evaluation of any other shipped module runs 34 million.
  int64_t max_instructions = 50'000'000;
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
  // Integer outputs taken as equal although they differ, because they are
  // indices picked by comparing floats (argmax, top-k, sort) and the keys of
  // the two picks tie within the tolerance; "" when none. Says where.
  std::string ties;
  // Not judged (equivalent is false), the message says why: the original
  // itself misses its f64 reference on these inputs, its output is vacuous
  // on every trial (VacuousOutputReason), its outputs follow the order of
  // its sums (EquivalenceOptions::sums_reordered), or evaluating a module passes
  // EquivalenceOptions::max_instructions.
  bool judged = true;
};

// Errors (status) only when a module cannot be evaluated; different entry
// signatures or outputs are a non-equivalent result.
absl::StatusOr<EquivalenceResult> CheckEquivalent(const Module& a, const Module& b,
                                                  const EquivalenceOptions& options = {});

// CheckEquivalent's side of the original, computed once (arguments and
// outputs per trial), for checking many modules against one original.
// Check(b) gives what CheckEquivalent(original, b, options) gives. The
// original must outlive the reference.
class EquivalenceReference {
 public:
  static absl::StatusOr<EquivalenceReference> Make(const Module& original,
                                                   const EquivalenceOptions& options = {});
  absl::StatusOr<EquivalenceResult> Check(const Module& b) const;
  // Whether every trial's output is vacuous (VacuousOutputReason): then
  // Check is never judged.
  bool vacuous() const;

 private:
  absl::StatusOr<EquivalenceResult> CheckStatic(const Module& b) const;

  struct Trial {
    std::vector<Literal> arguments;
    Literal outputs;
    std::string vacuous_reason;
  };
  const Module* original_ = nullptr;  // the original's static form where it has dynamic shapes
  std::shared_ptr<const Module> static_original_;
  std::string not_judged_;  // why no check can be judged ("" when they can)
  EquivalenceOptions options_;
  bool low_precision_ = false;
  std::vector<Trial> trials_;
};

// Whether any instruction of `module` produces an f16/bf16/f8 value (then
// CheckEquivalent gives every float output the low-precision tolerance).
bool ComputesInLowPrecision(const Module& module);

// `module` with every bf16/f16/f32 value (parameters, constants, results of
// every computation) made f64: what it computes with (nearly) no rounding.
// A bitcast-convert keeps its types (it reinterprets bits, which widening
// would change): its operand is converted back to its own type before it, and
// a floating result widened after it.
std::unique_ptr<Module> WidenedToF64(const Module& module);

// Compares two output literals as CheckEquivalent does.
EquivalenceResult CompareLiterals(const Literal& a, const Literal& b,
                                  const EquivalenceOptions& options = {});

// Why a comparison against `output` (what `original` computes on
// `arguments`) would be vacuous, or "" when it is not: a float output leaf
// with no finite element (all NaN or infinite) that depends on a parameter (a
// NaN or infinity the module writes as a constant is compared like any other
// value), or every output leaf constant
// (with at least one leaf of two or more elements) while some argument varies
// and the entry's root reads a parameter. Equal outputs there say nothing
// about two modules. (A root that reads no parameter computes constants, and
// comparing those is meaningful.)
std::string VacuousOutputReason(const Module& original, const Literal& output,
                                const std::vector<Literal>& arguments);

// A short text digest of an output: per array leaf its index path, shape,
// a 64-bit hash of the bytes, sum, min, max and NaN count.
std::string DigestLiteral(const Literal& literal);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_EQUIVALENCE_H_
