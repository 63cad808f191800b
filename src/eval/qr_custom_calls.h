// The QR custom calls JAX emits for jnp.linalg.qr where no LAPACK kernel is
// used (XLA's QrExpander rewrites them into ordinary HLO; see
// src/passes/expanders/qr_expander.h for their meaning):
//  - "Qr": a[..., m, n] -> (a', taus[..., min(m, n)]), LAPACK geqrf's output
//    (R in the upper triangle, the Householder vectors below it with an
//    implicit unit element, H = I - tau v v^T, dlarfg's signs).
//  - "ProductOfElementaryHouseholderReflectors": (a[..., m, n] with m >= n,
//    taus[..., k] with k <= n) -> Q[..., m, n], LAPACK orgqr's output: the
//    first n columns of H_0 ... H_{k-1}.
// jaxlib's LAPACK kernels on CPU, lapack_{s,d}geqrf_ffi and
// lapack_{s,d}orgqr_ffi, and its GPU solvers' {cu,hip}solver_geqrf_ffi and
// {cu,hip}solver_orgqr_ffi, take and give the same (their matrices column-major
// in memory, which the logical values here do not see).
// Computed in double for f32/f64 and rounded once to the result type.
#ifndef HLOGYM_EVAL_QR_CUSTOM_CALLS_H_
#define HLOGYM_EVAL_QR_CUSTOM_CALLS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "eval/interpreter.h"
#include "hlo/instruction.h"

namespace hlogym::eval {

// nullopt when `instruction` is not one of these targets or its element
// type is not f32/f64 (then it stays an opaque custom call); an error when
// the shapes do not fit the target.
std::optional<absl::StatusOr<ValuePtr>> EvalQrCustomCall(const Instruction& instruction,
                                                         Operands operands);

}  // namespace hlogym::eval

#endif  // HLOGYM_EVAL_QR_CUSTOM_CALLS_H_
