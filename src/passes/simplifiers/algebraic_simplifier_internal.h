// Internals of the algebraic simplifier shared by its .cc files: the visitor
// that rewrites one computation. Not part of the pass API (see
// algebraic_simplifier.h); its shape and constant helpers are the utility
// tier's (hlo/shape_util.h, hlo/query.h).
#ifndef HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_INTERNAL_H_
#define HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/module.h"
#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "passes/simplifiers/algebraic_simplifier.h"

namespace hlogym::algsimp {

// ---- The visitor -------------------------------------------------------

class Visitor {
 public:
  explicit Visitor(const AlgebraicSimplifierOptions& options) : options_(options) {}

  // Simplifies `computation` until a sweep changes nothing (or the rerun
  // limit). Returns whether anything changed. With `since`, the first sweep
  // skips the instructions whose surroundings did not change after that time
  // (an earlier run found nothing to do there); every later sweep skips those
  // that did not change since the sweep before it began (when `track_sweeps`).
  absl::StatusOr<bool> Run(Computation* computation, std::optional<uint64_t> since,
                           bool track_sweeps);

 private:
  absl::Status Visit(Instruction* hlo);

  // Elementwise and scalar rewrites (algebraic_simplifier.cc).
  absl::Status HandleAbs(Instruction* hlo);
  absl::Status HandleAdd(Instruction* hlo);
  absl::Status HandleSubtract(Instruction* hlo);
  absl::Status HandleMultiply(Instruction* hlo);
  absl::Status HandleDivide(Instruction* hlo);
  absl::Status HandleRemainder(Instruction* hlo);
  absl::Status HandleNegate(Instruction* hlo);
  absl::Status HandleNot(Instruction* hlo);
  absl::Status HandleAnd(Instruction* hlo);
  absl::Status HandleOr(Instruction* hlo);
  absl::Status HandleMaximum(Instruction* hlo);
  absl::Status HandleMinimum(Instruction* hlo);
  // The rules maximum and minimum share; true when one of them settled `hlo`.
  absl::StatusOr<bool> SimplifyMinOrMax(Instruction* hlo);
  absl::Status HandleClamp(Instruction* hlo);
  absl::Status HandleCompare(Instruction* hlo);
  absl::Status HandleSelect(Instruction* hlo);
  absl::Status HandleExp(Instruction* hlo);
  absl::Status HandleLog(Instruction* hlo);
  absl::Status HandlePower(Instruction* hlo);
  absl::Status HandleRsqrt(Instruction* hlo);
  absl::Status HandleReal(Instruction* hlo);
  absl::Status HandleImag(Instruction* hlo);
  absl::Status HandleComplex(Instruction* hlo);
  absl::Status HandleConvert(Instruction* hlo);
  absl::Status HandleBitcastConvert(Instruction* hlo);
  absl::Status HandleConstant(Instruction* hlo);
  absl::Status HandleIota(Instruction* hlo);
  absl::Status HandleCopy(Instruction* hlo);
  absl::Status HandleGetTupleElement(Instruction* hlo);
  absl::Status HandleSort(Instruction* hlo);
  absl::Status HandleMap(Instruction* hlo);

  // Data-movement rewrites (algebraic_simplifier_shape.cc).
  absl::Status HandleBroadcast(Instruction* hlo);
  absl::Status HandleReshape(Instruction* hlo);
  absl::Status HandleTranspose(Instruction* hlo);
  absl::Status HandleSlice(Instruction* hlo);
  absl::Status HandleConcatenate(Instruction* hlo);
  absl::Status HandlePad(Instruction* hlo);
  absl::Status HandleReverse(Instruction* hlo);
  absl::Status HandleDynamicSlice(Instruction* hlo);
  absl::Status HandleDynamicUpdateSlice(Instruction* hlo);
  absl::Status HandleGather(Instruction* hlo);
  absl::Status HandleScatter(Instruction* hlo);
  // A gather with `gather`'s dimension numbers and sortedness.
  Instruction* AddGather(const Instruction* gather, Shape shape, Instruction* operand,
                         Instruction* indices, std::vector<int64_t> slice_sizes);
  absl::StatusOr<bool> TrySinkBroadcastAfterElementwiseOps(Instruction* broadcast);
  absl::StatusOr<bool> SimplifyTransposeOfBroadcast(Instruction* transpose);
  // A chain of reshapes and transposes from `start` (a transpose or a
  // reshape) up to its input that only moves one size-1 dimension about and
  // permutes the others back to where they were: `start` is its input.
  bool RemoveReshapeTransposeChain(Instruction* start);
  // reshape(dynamic-update-slice) as a dynamic-update-slice of reshapes, for a reshape that
  // inserts and deletes the size-1 dims `degenerate` names.
  // XLA's rule for dynamic-slice and dynamic-update-slice: a start along a dimension that
  // `window` (the slice, or the update) spans whole is clamped to 0, so it becomes 0. `hlo`'s
  // clone with those starts zeroed (its starts from operand `first_start` on), or nullptr when
  // every such start is a constant 0 already.
  Instruction* WithWholeDimensionStartsZeroed(Instruction* hlo, int64_t first_start,
                                              const Shape& window, const Shape& whole);
  absl::Status ReshapeAboveDynamicUpdateSlice(Instruction* reshape,
                                              const DegenerateReshape& degenerate);
  absl::StatusOr<bool> RewriteDepthToSpaceAsSliceConcat(Instruction* transpose);

  // Reductions and dots (algebraic_simplifier_reduce.cc).
  absl::Status HandleReduce(Instruction* hlo);
  absl::Status HandleReduceWindow(Instruction* hlo);
  // HandleReduce's rules for single-output reduces (one each); true when it
  // rewrote the reduce.
  absl::StatusOr<bool> ReduceOfNegate(Instruction* reduce);
  absl::StatusOr<bool> ReduceOfTranspose(Instruction* reduce);
  absl::StatusOr<bool> ReduceOfReduce(Instruction* reduce);
  absl::StatusOr<bool> ReduceOfReshape(Instruction* reduce);
  absl::StatusOr<bool> ReduceOfConcatenate(Instruction* reduce);
  absl::StatusOr<bool> ReduceBesideArgMinMax(Instruction* reduce);
  absl::StatusOr<bool> ReduceOfBroadcast(Instruction* reduce);
  absl::Status HandleDot(Instruction* hlo);
  absl::StatusOr<bool> MoveContractingReorderToConstant(Instruction* dot);
  absl::StatusOr<bool> RemoveDegenerateDimensionFromDot(Instruction* dot);
  absl::StatusOr<bool> RemoveTransposesFromDotOperands(Instruction* dot);
  absl::Status RewriteDotWithoutContractingAsMultiply(Instruction* dot);
  absl::Status RewriteBatchPlusContractingAsReduce(Instruction* dot);

  // Convolutions (algebraic_simplifier_conv.cc).
  absl::Status HandleConvolution(Instruction* hlo);
  absl::StatusOr<bool> FoldConvInputPad(Instruction* conv);
  absl::StatusOr<bool> FoldConvFilterPad(Instruction* conv);
  absl::Status MergeScatterAdds(Instruction* add);
  absl::StatusOr<bool> SwapConvOperands(Instruction* conv);
  absl::StatusOr<bool> SimplifyConvToMultiply(Instruction* conv);
  absl::StatusOr<Instruction*> AddConvolutionLike(Instruction* conv, Instruction* lhs,
                                                  Instruction* rhs, const Window& window,
                                                  const ConvolutionDimensionNumbers& dnums);

 public:
  // ---- Building and replacing (used by every handler) ----

  // Adds an instruction with `shape` and `operands` to the computation.
  Instruction* Add(Opcode opcode, Shape shape, std::span<Instruction* const> operands);
  Instruction* AddUnary(Opcode opcode, Instruction* operand) {
    Instruction* ops[] = {operand};
    return Add(opcode, operand->shape(), ops);
  }
  Instruction* AddBinary(Opcode opcode, const Shape& shape, Instruction* lhs, Instruction* rhs) {
    Instruction* ops[] = {lhs, rhs};
    return Add(opcode, shape, ops);
  }
  Instruction* AddBroadcast(Instruction* operand, Shape shape, std::vector<int64_t> dims);
  Instruction* AddReshape(Instruction* operand, Shape shape);
  Instruction* AddTranspose(Instruction* operand, std::vector<int64_t> perm);
  Instruction* AddSlice(Instruction* operand, std::vector<SliceDimension> slice);
  Instruction* AddConvert(Instruction* operand, PrimitiveType type);
  // dynamic-slice(operand, starts) of `sizes`.
  Instruction* AddDynamicSlice(Instruction* operand, std::span<Instruction* const> starts,
                               std::vector<int64_t> sizes);
  // reduce(operand, init) over `dims` with `function`.
  Instruction* AddReduce(Instruction* operand, Instruction* init, Shape shape,
                         std::vector<int64_t> dims, Computation* function);
  Instruction* AddCompare(Instruction* lhs, Instruction* rhs, ComparisonDirection direction);
  // The module's scalar add reducer of `type`, made once per pass run (XLA's
  // "scalar_add_computation").
  Computation* ScalarAddComputation(PrimitiveType type);
  // A scalar constant of `type`.
  Instruction* AddScalarConstant(PrimitiveType type, double value, const Shape& like);
  // A constant `value` of `shape`'s element type broadcast to `shape` (or
  // just the scalar constant when `shape` is a scalar): XLA's MakeScalarLike.
  Instruction* ScalarLike(const Shape& shape, double value);

  // Replaces `old` by `replacement` if their shapes are compatible and `old`
  // has no control edges; removes `old` and the operands it leaves dead.
  bool ReplaceIfCompatible(Instruction* old, Instruction* replacement);
  // Replaces `old` by the freshly added `made` (same element type and
  // dimensions; it takes `old`'s exact shape, layout included). Always
  // succeeds for a well-formed rewrite; an error means a bug.
  absl::Status ReplaceWithNew(Instruction* old, Instruction* made);
  // Rewires all uses of `old` (not the visited instruction) but leaves `old`
  // in place, dead: XLA does so when it rewrites a user of the visited
  // instruction, and the dead instruction still counts until DCE runs.
  absl::Status ReplaceUsesKeepingOld(Instruction* old, Instruction* replacement);
  void MarkChanged() { changed_ = true; }
  Computation* computation() const { return computation_; }
  const AlgebraicSimplifierOptions& options() const { return options_; }
  // Whether a handler may rewrite `hlo` (no control edges, no side effects).
  static bool Rewritable(const Instruction* hlo);

 private:
  void RemoveDeadTree(Instruction* root);

  const AlgebraicSimplifierOptions& options_;
  Computation* computation_ = nullptr;
  bool changed_ = false;
  absl::flat_hash_map<PrimitiveType, Computation*> scalar_add_computations_;
  // Instructions removed during the current sweep (their pointers may be
  // stale; they are never dereferenced, only looked up).
  absl::flat_hash_set<const Instruction*> removed_;
};

}  // namespace hlogym::algsimp

#endif  // HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_INTERNAL_H_
