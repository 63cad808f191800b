// What the pinned XLA:CPU compiler hands to YNNPACK instead of compiling it
// itself (xla/backends/cpu/ynn_support.cc: a dot or reduce-like op YNNPACK
// supports, and IsInstructionPreferredByYnn). XLA's CPU pipeline configures
// passes with these predicates, and they leave such instructions alone:
// operand_upcaster and the bf16 float normalization keep these dots' bf16
// operands, tree_reduction_rewriter keeps these reduces whole, and the float
// normalization keeps these reduces and reduce-windows in bf16. Where the
// pinned XLA differs from its source, XLA's own dumps decided (checked with
// small modules: a bf16 x bf16 -> bf16 dot is not taken, one -> f32 is).
#ifndef HLOGYM_PASSES_CPU_LIBRARY_SUPPORT_H_
#define HLOGYM_PASSES_CPU_LIBRARY_SUPPORT_H_

#include "hlo/instruction.h"

namespace hlogym {

// A reduce or reduce-window that XLA:CPU gives YNNPACK: one input and its
// init (of the result type), default layouts of rank at most 8, a reducer of
// exactly add (input/result f64/f64, f32/f32, f16/f32, bf16/f32, s8/s32 or
// u8/s32) or maximum/minimum (input type = result type: u8, s8, bf16, f16, f32,
// f64) of its two parameters, at least 4096 elements in the result or an
// operand; a reduce reduces some dimension, a reduce-window's windows do not
// overlap (stride = size where size > 1), have no dilation or reversal, and
// window some dimension.
bool YnnTakesReduceLike(const Instruction& hlo);

// A dot that XLA:CPU gives YNNPACK: operand and result types (f64, f64 ->
// f64), (f32, f32 -> f32), (bf16, bf16 -> f32), (s8, s8 -> s32) or
// (u8, s8 -> s32), default layouts of rank at most 8, batch dimensions leading
// on both sides in order, the left side's contracted dimensions last, more
// than one row and one column (m, n > 1), and some dimension of 8 or more
// (max(m, k, n) >= 8).
bool YnnTakesDot(const Instruction& hlo);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CPU_LIBRARY_SUPPORT_H_
