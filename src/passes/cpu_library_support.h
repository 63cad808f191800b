// What the pinned XLA:CPU compiler hands to YNNPACK instead of compiling it
// itself (xla/backends/cpu/ynn_support.cc: a reduce-like op YNNPACK supports,
// and IsInstructionPreferredByYnn). XLA's CPU pipeline configures passes with
// this predicate, and they leave such instructions alone:
// tree_reduction_rewriter keeps these reduces whole, and the bf16 float
// normalization keeps these reduces and reduce-windows in bf16.
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

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CPU_LIBRARY_SUPPORT_H_
