// jaxlib's LAPACK kernels on CPU that the reference evaluator computes beside
// those of other_ops.cc (potrf, trsm), eigh_custom_call.cc (syevd) and
// qr_custom_calls.cc (geqrf, orgqr). JAX lowers jnp.linalg.solve, inv, det
// and slogdet (getrf), svd and pinv (gesdd, gesvd) and
// lax.linalg.tridiagonal_solve (gtsv) on CPU to these typed-FFI custom calls;
// their meaning is LAPACK's (its documentation, and jaxlib's
// cpu/lapack_kernels for the operands and results). Every matrix is
// column-major in memory, as LAPACK wants it; the logical values here do not
// see layouts. Computed in double and rounded once to the result type.
//
//  - lapack_{s,d}getrf_ffi: a[..., m, n] -> (lu, ipiv s32[..., min(m, n)],
//    info s32[...]): P A = L U by partial pivoting (in column j, the first
//    row of largest magnitude at or below j), L unit lower (below the
//    diagonal of lu), U upper; ipiv[j] the 1-based row swapped with row j;
//    info 0, or the 1-based column of the first zero pivot (the
//    factorization goes on past it, as LAPACK's does).
//  - lapack_{s,d}gesdd_ffi and lapack_{s,d}gesvd_ffi: a[..., m, n] ->
//    (a', s[..., k], u, vt, info s32[...]), k = min(m, n), attribute mode
//    'A' (65: u [m, m], vt [n, n]), 'S' (83: u [m, k], vt [k, n]) or 'N'
//    (78: u and vt not computed; zeros here). A = U diag(s) Vt, s
//    descending. a' is what LAPACK leaves in a (unspecified; JAX never reads
//    it): a itself here. Singular vectors take eigh_custom_call.cc's sign
//    convention on u's columns (vt's rows follow), not LAPACK's, so outputs
//    that depend on their signs do not match XLA's. A non-finite input gives
//    NaN and info 1 (LAPACK reports an error there too, and JAX gives NaN).
//  - lapack_{s,d}geev_ffi with compute_left 'N' (78): a[..., n, n] -> (wr,
//    wi [..., n], vl (zeros), vr complex[..., n, n], info): eigenvalues in
//    the order Eigen's QR iteration finds them (LAPACK's is its own: only
//    order-free uses of them match XLA), a conjugate pair positive imaginary
//    part first; right eigenvectors of unit norm, largest component real and
//    positive. compute_left 'V' stays opaque.
//  - lapack_{s,d}gtsv_ffi: (dl[..., n], d[..., n], du[..., n], b[..., n,
//    nrhs]) -> (dl', d', du', x, info s32[...]): the tridiagonal system with
//    sub-diagonal dl[1:], diagonal d and super-diagonal du[:-1] (dl[0] and
//    du[n-1] are not read) solved by Gaussian elimination with partial
//    pivoting, LAPACK gtsv's algorithm; d', du' and dl'[1:] are its U
//    (diagonal, first and second super-diagonal); info 0, or the 1-based row
//    of a zero pivot (x is then partial; JAX gives NaN).
//
// Lowered for GPUs (cuSOLVER, hipSOLVER), the same programs call
// {cu,hip}solver_getrf_ffi (as getrf), {cu,hip}_lu_pivots_to_permutation
// (0-based pivots s32[..., k] -> the permutation s32[..., m] their swaps
// make of the rows, which the CPU lowering computes in HLO), and
// {cu,hip}solver_gesvdj_ffi (attributes compute_uv, full_matrices; its fourth
// result is V [..., n, n or k], not Vt); geqrf, orgqr and syevd as
// qr_custom_calls.h and eigh_custom_call.h say; {cu,hip}sparse_gtsv2_ffi, the
// tridiagonal solve, gives x alone (b's shape). The other GPU SVDs stay
// opaque. Lowered for TPUs, lax.linalg.lu is XLA's
// own LuDecomposition: a[..., m, n] -> (lu, 0-based pivots s32[..., min(m,
// n)], the permutation s32[..., m]); QR and eigh are Qr and Eigh there.
//
// jaxlib before 0.4.32 (JAX 0.4.13 to 0.4.31) called the same kernels the
// older way (API_VERSION_STATUS_RETURNING, no _ffi suffix): sizes and flags as
// leading s32 operands, LAPACK's workspaces (and geqrf's and orgqr's info)
// as extra results. LegacyLapackAsFfi says which of today's calls each is.
#ifndef HLOGYM_EVAL_LAPACK_CUSTOM_CALLS_H_
#define HLOGYM_EVAL_LAPACK_CUSTOM_CALLS_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/interpreter.h"
#include "hlo/instruction.h"

namespace hlogym::eval {

// nullopt when `instruction` is not one of these targets, its element type
// is not f32/f64 or an attribute is missing (then it stays an opaque custom
// call); an error when the shapes do not fit the target.
std::optional<absl::StatusOr<ValuePtr>> EvalLapackCustomCall(const Instruction& instruction,
                                                             Operands operands);

// An older jaxlib's LAPACK call as today's typed-FFI call: lapack_{s,d}getrf
// (operands batch, m, n, a), blas_{s,d}trsm (left_side, lower, transpose 0/1/2
// for N/T/C, unit_diagonal, m, n, batch, alpha, a, b), lapack_{s,d}gesdd
// (full_matrices, compute_uv, batch, m, n, lwork, a; results a, s, u, vt,
// info, iwork, work), lapack_{s,d}syevd (lower, batch, n, a; results v, w,
// info, work, iwork), lapack_{s,d}geqrf (batch, m, n, lwork, a; results a,
// taus, info, work) and lapack_{s,d}orgqr (batch, m, n, k, lwork, a, taus;
// results q, info, work). (The older Cholesky, lapack_{s,d}potrf, is computed
// as it is: other_ops.cc.)
struct LegacyLapackCall {
  std::unique_ptr<Instruction> call;  // today's call: target, attributes, its results' shape
  std::vector<ValuePtr> operands;     // its operands, in its order
  // The older call's results past today's (workspaces, info): zeros, which
  // JAX never reads (an info of 0 says the call succeeded).
  int results = 0;  // how many of the older call's results today's call gives
};
// nullopt when `instruction` is none of these or its scalar operands are not
// s32 scalars.
std::optional<LegacyLapackCall> LegacyLapackAsFfi(const Instruction& instruction,
                                                  Operands operands);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_LAPACK_CUSTOM_CALLS_H_
