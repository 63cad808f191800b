// triangular_solve_expander: XLA's TriangularSolveExpander.
//
// Implements: every triangular-solve of real floating-point (batched)
// matrices becomes a call of a computation
// "xla.triangular_solve_<a shape>_<b shape>_<left|right>_<lower|upper>_
// <NO_TRANSPOSE|TRANSPOSE|ADJOINT>_<unit|nonunit>" (one per signature,
// shared by all such calls in a run). The callee follows XLA's choice of
// algorithm:
//  - b without elements: the callee returns b; a 1x1 a: b (unit diagonal)
//    or b divided by a.
//  - more than block_size/16 batch matrices and n < block_size/4: the direct
//    solve, unrolled over the rows (left side) or columns (right side) of b:
//    each is b's slice minus the dot of the triangle's slice with the part
//    already solved, divided by the diagonal element (not for a unit
//    diagonal), written back with a dynamic-update-slice.
//  - otherwise the blocked algorithm (MAGMA's, as XLA uses it) with block
//    size min(block_size, n): a is masked to its triangle (for a unit
//    diagonal, to the strict triangle plus the identity); its diagonal
//    blocks are cut out (the last, partial one padded with the identity)
//    and all of them inverted at once by a counted while loop over the rows
//    (after rescaling to a unit diagonal, one batched row-times-matrix dot
//    per row); then the solution is built block by block, unrolled, in the
//    order the triangle dictates: the block of b minus the dot of a's panel
//    with the blocks already solved, times the inverted diagonal block,
//    concatenated to the solution. All dots use HIGHEST precision.
// TRANSPOSE and ADJOINT are the same for real types (dots with the
// transposed contracting dimension). bf16/f16 are computed in their own type.
// Differs from XLA: the diagonal blocks are cut with slices and a
// concatenate instead of a gather; the inversion loop counts from 0 to
// size-2 (XLA from 1 to size-1) with the same rows visited; the direct solve
// leaves out the dots with an empty solved part (XLA emits zero-sized dots
// there). Leaves out: complex element types and dynamic shapes (their
// triangular-solve stays, and the pass reports no change for them).
#ifndef HLOGYM_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_

#include <cstdint>

#include "passes/pass.h"

namespace hlogym {

class TriangularSolveExpander : public Pass {
 public:
  // XLA's default block size is 128 (what the registry uses).
  explicit TriangularSolveExpander(int64_t block_size = 128, bool use_direct_solves = true)
      : block_size_(block_size < 1 ? 1 : block_size), use_direct_solves_(use_direct_solves) {}
  std::string_view name() const override { return "triangular_solve_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;

 private:
  int64_t block_size_;
  bool use_direct_solves_;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_TRIANGULAR_SOLVE_EXPANDER_H_
