// qr_expander: XLA's QrExpander.
//
// Rewrites the two custom calls JAX emits for jnp.linalg.qr where no LAPACK
// kernel is used:
//  - custom_call_target="Qr": operand a[batch..., m, n], result the tuple
//    (a', taus[batch..., min(m, n)]) of LAPACK's geqrf: R in the upper
//    triangle of a', the Householder vectors below it (v[j] = 1 implicit),
//    H_j = I - taus[j] v v^T, beta (R's diagonal) = -sign(alpha) * norm as in
//    dlarfg, tau = 0 (H_j = I) when the column below the diagonal is zero.
//  - custom_call_target="ProductOfElementaryHouseholderReflectors": operands
//    a[batch..., m, n] (m >= n) and taus[batch..., k] (k <= n), result
//    Q[batch..., m, n] = the first n columns of H_0 H_1 ... H_{k-1} (orgqr).
// Each becomes a call of a computation "xla.Qr_<a shape>" or
// "xla.ProductOfElementaryHouseholderReflectors_<a shape>_<taus shape>"
// (made an identifier: f32[4,3] -> f32_4_3_), one per shape, shared by all
// calls in a run.
//
// Implements XLA's blocked algorithm with block size 128, unrolled over the
// blocks, dots at HIGHEST precision:
//  - each panel a[i:, i:i+k] is factorized by a counted while loop over its
//    columns (XLA's QrBlock: the Householder vector of column j from a
//    masked norm with overflow-safe scaling, applied to the later columns by
//    two batch dots, column j rewritten with beta and v, taus[j] set by an
//    iota mask);
//  - the block's reflectors are gathered into the compact WY form
//    I + Y T Y^T (Schreiber-Van Loan), T built by a while loop over its
//    columns, and applied to the trailing columns a[i:, i+k:] with dots;
//  - the product of reflectors starts from the identity and applies the
//    blocks last to first in the same WY form.
// Leaves out: complex element types and anything but f32/f64 (those custom
// calls stay, unchanged), dynamic shapes (unchanged); where a block has no
// trailing columns (or k == 0 reflectors) the zero-sized dots and updates
// XLA still emits are not built. Loop computations are named while_cond /
// while_body rather than XLA's qr/wy names; identity matrices are iotas of
// the full batched shape and -taus is broadcast straight to [.., k, k]
// (XLA goes through a 2-D identity / a [.., 1, k] broadcast), so op counts
// differ slightly from XLA's. A recognised target with wrongly shaped
// operands or result is an error naming the instruction.
#ifndef HLOGYM_PASSES_EXPANDERS_QR_EXPANDER_H_
#define HLOGYM_PASSES_EXPANDERS_QR_EXPANDER_H_

#include "passes/pass.h"

namespace hlogym {

class QrExpander : public Pass {
 public:
  std::string_view name() const override { return "qr_expander"; }
  absl::StatusOr<bool> Run(Module& module) override;
  bool MayChange(const Module& module) const override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_EXPANDERS_QR_EXPANDER_H_
