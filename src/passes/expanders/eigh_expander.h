// eigh_expander: XLA's EighExpander.
//
// Implements: every custom-call with custom_call_target="Eigh" (what JAX
// emits for jnp.linalg.eigh where no LAPACK/cuSOLVER is available) of one
// f32/f64 operand a[..., n, n] with result (v[..., n, n], w[..., n]) and
// backend_config "lower,sort_eigenvalues,max_iter,tol" (JAX: "1,1,100,1e-6")
// becomes a call of a computation "xla.Eigh_<shape>" (one per shape and
// config, shared by all such calls in a run) holding XLA's algorithm, the
// parallel two-sided Jacobi method of Brent and Luk:
//  - the matrix is built from the `lower` (or upper) triangle and its mirror,
//    and divided by its largest magnitude (1 for a zero matrix);
//  - it is split into quadrants of size ceil(n/2) (odd n padded by a zero
//    row and column); a while loop runs sweeps while the sweep count is below
//    max_iter and, for some batch element, the off-diagonal squared norm is
//    above tol^2 times the squared Frobenius norm;
//  - a sweep is a counted loop of 2*ceil(n/2)-1 rounds; a round computes the
//    2x2 symmetric Schur rotations of all diagonal pairs of the quadrants at
//    once (t = 0 when the off-diagonal element is below 0.1 * f32 epsilon
//    times the smaller diagonal magnitude, for f64 too as in XLA, which
//    limits f64 results to about 1e-8 relative), applies them to rows and
//    columns, writes the exact 2x2 eigenvalues to the diagonals and zeros to
//    the quadrants' off-diagonal diagonals, and moves rows and columns by the
//    round-robin tournament permutation; the eigenvector quadrants get the
//    row rotations and row permutation;
//  - w is the diagonal times the scale, v the transposed eigenvector matrix
//    (cut back to n); with sort_eigenvalues, a sort of (w broadcast along
//    rows, v) along the columns with a less-than comparator orders both.
//  - n <= 1 gives v = ones and w = a (no loop).
// Differs from XLA: v is finally normalized to the sign convention the
// reference evaluator uses for the custom call (eval/eigh_custom_call.cc):
// each column is negated when its max + min < 0, i.e. a component of
// largest magnitude is positive. XLA leaves the signs the sweeps produce.
// The sweep state does not carry tol (it is a constant of the condition),
// the sweep loop has no dead placeholder root, the diagonal is read with a
// select and a reduce, and calls with different configs get different
// computations (XLA's cache keys on the shape only).
// Leaves out: complex (Hermitian) operands and f16/bf16/other types, and
// dynamic shapes: those calls stay unchanged. A malformed Eigh call (shapes
// or backend_config) is an error naming the instruction.
#ifndef HLOGYM_PASSES_EXPANDERS_EIGH_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_EIGH_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class EighExpander : public Pass {
 public:
  std::string_view name() const override { return "eigh_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_EIGH_EXPANDER_H_
