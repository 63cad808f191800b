// The evaluator's engine (internal): runs computations over Values with a
// per-computation execution plan (post order, operand slots, use counts so
// intermediates are freed after their last use), and the kernel entry points
// the opcodes dispatch to.
#ifndef HLOGYM_EVAL_INTERPRETER_H_
#define HLOGYM_EVAL_INTERPRETER_H_

#include <array>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "eval/evaluator.h"
#include "eval/value.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace hlogym::eval {

using Operands = std::span<const ValuePtr>;

class Interpreter;

// A scalar computation (the to_apply of reduce, scatter, sort, map, ...)
// prepared for many calls.
class ScalarComputation {
 public:
  ScalarComputation(Interpreter& interpreter, const Computation& computation);

  // Opcode `op` when the computation is `ROOT op(p0, p1)` (or `op(p1, p0)`
  // for a commutative op) over two scalars of one type; nullopt otherwise.
  std::optional<Opcode> binary_op() const { return binary_op_; }
  // True when the computation returns its parameter 1 (scatter's
  // "overwrite").
  bool returns_second() const { return returns_second_; }
  // The comparator pattern `compare(p0, p1), direction=LT/GT` possibly with
  // a TOTALORDER type, for sort fast paths.
  const Instruction* simple_compare() const { return simple_compare_; }

  const Computation& computation() const { return computation_; }
  int64_t num_parameters() const { return computation_.num_parameters(); }

  // Calls the computation on scalar arguments; returns the root's array
  // outputs (the tuple elements if the root is a tuple).
  absl::StatusOr<std::vector<ValuePtr>> Call(std::span<const ValuePtr> args);

 private:
  Interpreter& interpreter_;
  const Computation& computation_;
  std::optional<Opcode> binary_op_;
  bool returns_second_ = false;
  const Instruction* simple_compare_ = nullptr;
};

class Interpreter {
 public:
  explicit Interpreter(const EvaluatorOptions& options);
  ~Interpreter();

  absl::StatusOr<ValuePtr> Run(const Computation& computation, Operands args);
  // As Run, with arguments the computation's parameters take (moved out of `args`) rather than
  // share: a while body's state, a call's, fusion's or conditional branch's operands, so that
  // the computation may hold the only reference to the buffers it updates (OverwritableCopy).
  absl::StatusOr<ValuePtr> RunConsuming(const Computation& computation, std::span<ValuePtr> args);
  const EvaluatorOptions& options() const { return options_; }
  // The 128-bit state behind rng-get-and-update-state (low word first).
  std::array<uint64_t, 2>& rng_counter() { return rng_counter_; }
  ScalarComputation& Scalar(const Computation& computation);

 private:
  struct Plan;
  const Plan& GetPlan(const Computation& computation);
  // Run's body; `owned`, where not empty, is `args` itself, for the parameters to move out of.
  absl::StatusOr<ValuePtr> RunPlan(const Computation& computation, Operands args,
                                   std::span<ValuePtr> owned);
  // `operands` are the instruction's own (Run's, released where this is their last use): a call,
  // fusion, conditional or while loop hands them on to the computation it runs (RunConsuming).
  absl::StatusOr<ValuePtr> EvalInstruction(const Instruction& instruction,
                                           std::span<ValuePtr> operands, Operands args);
  absl::StatusOr<ValuePtr> EvalConstant(const Instruction& instruction);

  EvaluatorOptions options_;
  std::array<uint64_t, 2> rng_counter_ = {0, 0};
  absl::flat_hash_map<const Computation*, std::unique_ptr<Plan>> plans_;
  absl::flat_hash_map<const Instruction*, ValuePtr> constants_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<ScalarComputation>> scalars_;
  int depth_ = 0;
  int64_t instructions_run_ = 0;  // against options_.max_instructions
};

// --- kernels (each returns a status without the instruction's name; the
// interpreter adds it) ---------------------------------------------------------

// Elementwise unary/binary ops, compare, select, clamp, convert,
// bitcast-convert, complex/real/imag, is-finite, reduce-precision.
absl::StatusOr<ValuePtr> EvalElementwise(const Instruction& instruction, Operands operands);
// broadcast, reshape, bitcast, copy, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse, iota, gather.
absl::StatusOr<ValuePtr> EvalDataMovement(const Instruction& instruction, Operands operands);
absl::StatusOr<ValuePtr> EvalDot(const Instruction& instruction, Operands operands,
                                 int num_threads);
// ragged-dot in its three modes (JAX's lax.ragged_dot_general, which JAX
// lowers to it for GPUs and TPUs), in double.
absl::StatusOr<ValuePtr> EvalRaggedDot(const Instruction& instruction, Operands operands);
absl::StatusOr<ValuePtr> EvalConvolution(const Instruction& instruction, Operands operands,
                                         int num_threads);
// reduce, reduce-window, select-and-scatter, scatter, sort, map.
absl::StatusOr<ValuePtr> EvalWithComputation(Interpreter& interpreter,
                                             const Instruction& instruction, Operands operands);
// rng-bit-generator, rng, rng-get-and-update-state (rng.cc).
absl::StatusOr<ValuePtr> EvalRandom(Interpreter& interpreter, const Instruction& instruction,
                                    Operands operands);
// custom-call "GetRngSeed": EvaluatorOptions::rng_seed as u64[] (rng.cc).
absl::StatusOr<ValuePtr> EvalGetRngSeed(Interpreter& interpreter, const Instruction& instruction);
// fft, custom-call, topk, cholesky, triangular-solve, batch-norm-*.
absl::StatusOr<ValuePtr> EvalOther(Interpreter& interpreter, const Instruction& instruction,
                                   Operands operands);

// Applies the scalar binary `op` elementwise: out[i] = op(a[i], b[i]) over n
// elements of `type` (out may alias a). False if op/type is not supported.
bool ApplyBinary(Opcode op, PrimitiveType type, const uint8_t* a, const uint8_t* b, uint8_t* out,
                 int64_t n);

// Structural check: same tuple structure, element types and dimensions.
bool Matches(const Value& value, const Shape& shape);

// Reads element `index` of an array Value as a scalar Value.
ValuePtr ScalarAt(const Value& array, int64_t index);
// Reads element `index` of an integer/pred array as int64.
int64_t GetIndexElement(const Value& array, int64_t index);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_INTERPRETER_H_
