// algsimp: XLA's AlgebraicSimplifier
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc), layout-insensitive,
// with the options XLA's CPU compiler uses in its "simplification" pipeline
// (dot strength reduction off, min/max NaN propagation off, no non-canonical
// dots). Like XLA's pass it visits every non-fusion computation in post order
// and repeats a computation's sweep until nothing changes (XLA's
// run_to_fixed_point, at most 50 sweeps); each rewrite replaces the visited
// instruction and removes what it leaves dead, except that, as in XLA, the
// users a broadcast rewrite replaces (sinking below elementwise users, scalar
// broadcasts feeding reshapes/slices/...) stay behind dead until DCE.
//
// Rewrites implemented (conditions as in XLA):
//  - add: A+0, 0+A; constant to the rhs; (A+C1)+C2 -> A+(C1+C2);
//    (C1-A)+C2 -> (C1+C2)-A; A*C+B*C -> (A+B)*C (ints, or C a power of 2);
//    scatter(A,i,u)+B -> scatter(A+B,i,u) for a one-use scatter-add (not
//    when both operands are such scatters).
//  - subtract: A-A -> 0 (ints); A-0; A-C -> A+(-C); A-(A-B) -> B,
//    A-(A+B) -> -B, (A+B)-A -> B (ints).
//  - multiply: A*1, 1*A; A*0 (ints); (-A)*(-B) -> A*B; |A|*|A| -> A*A;
//    A*convert(pred) -> select(pred, A, 0); constant reassociation
//    ((A*C1)*(B*C2), (A*C1)*C2, (A*C)*broadcast(B)); sqrt(x)*sqrt(x) -> x and
//    rsqrt(x)*rsqrt(x) -> 1/x for x >= 0.
//  - divide: A/1; integer division by a power of 2 -> shifts;
//    A/pow(B,C) -> A*pow(B,-C); A/sqrt(B) -> A*rsqrt(B); A/rsqrt(B) -> A*sqrt(B);
//    float A/C -> A*(1/C); (A/B)/(C/D), (A/B)/C, A/(B/C) reassociation;
//    convert(pred)/broadcast(Y) -> broadcast(1/Y)*convert(pred);
//    float A/broadcast(B) -> A*broadcast(1/B) when the broadcast and B have
//    no other users (fitted to the pinned XLA's divide/multiply counts).
//  - remainder: (A%B)%B; A%2^k -> A&(2^k-1) (ints); iota%N with N >= size.
//  - negate(negate), not(not), abs of a non-negative value, exp(0) -> 1,
//    log(pow/sqrt/rsqrt), pow(A, 0/1/2/3/-1/0.5), rsqrt(pow(A,-2)),
//    rsqrt(1/A), real/imag/complex pairs.
//  - and/or with true/false/0 operands. No xor rewrite: the pinned XLA's
//    simplifier leaves xor(A, 0) and xor(A, A') of identical A, A' (its pass
//    dumps; the newer XLA source folds both).
//  - maximum/minimum: identical operands; with -inf/+inf (lowest/highest);
//    nested max/min with a repeated operand; max(c1, min(x, c2)) -> clamp;
//    max(f(x), f(y)) -> f(max(x,y)) for tanh/erf/cbrt/logistic;
//    clamp(a, clamp(a, x, b), b).
//  - compare: unsigned against 0, non-negative values against 0, x op x
//    (ints), pred ==true / !=false, (select(a>=b,1,0) != 0) -> a>=b,
//    gt(max(a,b), a) -> gt(b, a) and its min variants.
//  - select: identical branches, constant predicate, select(not(p), a, b),
//    pred-typed selects -> p / not(p) / and / or.
//  - convert: to the same type; convert pairs that are no-ops.
//  - bitcast-convert: to the same type; a chain keeps its last;
//    bitcast-convert(concatenate(bitcast-convert(a_i))) -> concatenate(a_i)
//    where the a_i have the result's type.
//  - constant: arrays of one repeated value -> broadcast(scalar);
//    R1 0,1,2,... -> iota; R1 integer strided iota -> iota*stride.
//  - iota of a dimension of size <= 1 -> zeros; copy -> its operand;
//    get-tuple-element(tuple); sort of <= 1 element; map of a parameter /
//    constant / elementwise op.
//  - broadcast: to a reshape or transpose when it adds no elements;
//    broadcast(reshape that inserts 1s) -> broadcast; sinking broadcasts
//    below elementwise users whose operands are all compatible broadcasts;
//    scalar broadcasts feeding reshape/transpose/reverse/sort/slice/
//    dynamic-slice; broadcast(iota) -> iota; broadcast(broadcast);
//    dropping degenerate operand dims.
//  - reshape: zero elements -> constant; no-op; reshape(reshape);
//    reshape(broadcast) -> broadcast; reshape(iota) -> iota (mixed radix).
//  - transpose: identity; transpose(transpose); transpose(dot) -> dot(b, a)
//    for canonical dots; permuting only degenerate dims -> reshape;
//    transpose(broadcast) -> broadcast; reshape(transpose(reshape(x))) that
//    splits and regroups attention heads -> concatenate of <= 5 slices of x.
//  - slice: no-op; slice(pad) (inside the operand, undoing the pad, or only
//    padding); slice(slice); slice(broadcast); slice of a concatenate to an
//    operand or a smaller concatenate (also scalar slices); slice(reverse) ->
//    reverse(slice) (the slice alone where the reversed dims keep one
//    element); redundant strides.
//  - concatenate: one operand; empty operands; nested concatenates; adjacent
//    slices of one operand; two operands one of which broadcasts a scalar ->
//    pad; N copies of one size-1 operand -> broadcast.
//  - pad: empty operand -> broadcast; interior padding of size-1 dims;
//    no-op pads; pad(broadcast(x)) -> broadcast(pad(broadcast'(x))) over the
//    padded dims (a one-use broadcast, x's dims all padded); negative padding
//    -> pad + slice.
//  - reverse: of size-1 dims; reverse(reverse).
//  - dynamic-slice: scalar/full size -> operand; full-size dims get index 0;
//    of a broadcast, transpose, degenerate reshape; constant indices -> slice.
//  - dynamic-update-slice: of a broadcast scalar with constant indices -> pad;
//    full update -> update; full-size dims get index 0; empty update.
//  - gather: empty operand -> zeros; one element -> broadcast; rank-1
//    operands of <= 4 elements with implicit scalar indices -> a chain of
//    selects; gather(pad(x)) and gather(bitcast reshape(pad(x))) ->
//    pad(gather(x)) where the padded dims pass through the gather whole (or
//    are batching dims the indices pad alike).
//  - reduce: empty -> broadcast(init); no reduced elements -> reshape;
//    argmax/argmin of a broadcast scalar constant -> (constant, 0);
//    max (min) reduce of x next to an argmax (argmin) of x over the same
//    dims -> the argmax's value output;
//    reduce(negate(x)) -> negate(reduce(x)) for float sums; reduce(transpose);
//    reduce(reduce) merge; reduce(reshape) both cases; reduce of a scalar
//    broadcast with min/max/and/or; reduce(broadcast) commuted; sums of
//    broadcast dims -> multiply.
//  - reduce-window (single output): empty -> broadcast(init); scalar ->
//    operand; cumulative sum of a broadcast constant -> c * (1 + iota);
//    one-element windows of add/min/max -> elementwise op with the init
//    (+ pad); windows over whole dimensions -> reshape(reduce); a pad (or
//    convert(pad)) with the init value folded into the window, or a
//    broadcast where each window reads one unpadded element.
//  - dot: empty -> zeros; no contracting dims -> multiply; a contracting
//    dim merged from dims a transpose reordered, against a constant -> the
//    reorder moved to the constant; degenerate dims removed;
//    dot(transpose(a), transpose(b)) -> transpose(dot).
//  - convolution (algebraic_simplifier_conv.cc): empty operand -> zeros;
//    zero pads of the input or (interior only) of the kernel folded into the
//    window; operand swap when the kernel's spatial extent exceeds the
//    input's (the kernel reversed); depthwise conv -> multiply (+ reduce).
//
// Left out (off in XLA's CPU options, layout-sensitive, or not yet done):
// dot strength reduction to reduce, associative dot reordering, dot of
// concat/gather, dot param-to-rhs, conv -> dot
// (layout-sensitive in XLA), variadic reduce-window rewrites, scatter rewrites,
// reduce(concat) -> map,
// argmin/argmax matching, merging two scatter-adds, add(dus(0, ...)), select of
// dynamic-update-slice, dynamic-slice of dynamic-slice/iota,
// dus(dus(ds)), reshape(dus), transpose/reshape chain removal, hoisting
// transposes, slice/reshape and
// reverse of elementwise ops,
// tautological and-compares, all-reduce/all-gather of constants, bitcast and
// copy/bitcast layout rewrites, custom-call rewrites, upcast-op-downcast
// narrowing, optimization-barrier pruning, fast-math-only rewrites, and
// A/broadcast(B) -> A*broadcast(1/B) (newer XLA with executing_on_cpu).
// dynamic-update-slice -> pad is implemented but off by default.
//
// One deliberate difference from XLA's source: max(x, -inf) and
// min(x, +inf) are also removed for floats although the CPU options turn
// min/max NaN propagation off; XLA's own CPU dumps show the rewrite (see
// datasets/smoke/dumps/mlp_train.0008...), and -inf never wins a maximum.
#ifndef HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
#define HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_

#include <string>
#include <string_view>
#include <utility>

#include "passes/pass.h"

namespace hlogym {

// The AlgebraicSimplifierOptions XLA's CPU simplification pipeline uses.
// AlgebraicSimplifier::TrackingKey (algebraic_simplifier.cc) lists every option: a new one goes
// there too, or runs with different values would share one record of what was seen.
struct AlgebraicSimplifierOptions {
  bool enable_dot_strength_reduction = false;
  bool enable_dot_to_multiply_rewrite = true;
  bool minmax_propagate_nan = false;
  bool enable_sink_broadcast = true;
  bool enable_broadcast_degenerate_dimension = true;
  bool enable_reduce_of_reshape = true;
  bool enable_negative_padding_replacement = true;
  bool unconditionally_simplify_reduce_of_transpose_or_reshape = false;
  bool enable_dynamic_update_slice_to_pad_replacement = false;
  bool enable_conv_operand_swap = true;
  bool rewrite_reshape_transpose_as_slice_concatenate = true;
  bool enable_window_reduce_to_reduce_replacement = true;
  // Gathers from rank-1 operands of at most this many elements (with
  // implicit scalar indices) become chains of selects.
  int64_t very_small_gather_size = 4;
  int max_sweeps = 50;
};

class AlgebraicSimplifier : public Pass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {},
                               std::string name = "algsimp")
      : options_(options), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  // Names this pass and its options for the module's record of tracked runs
  // (passes/change_tracking.h).
  std::string TrackingKey() const;

  AlgebraicSimplifierOptions options_;
  std::string name_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
