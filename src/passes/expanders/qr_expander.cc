#include "passes/expanders/qr_expander.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/expanders/matrix_builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_util.h"

namespace hlogym {
namespace {

constexpr int64_t kBlockSize = 128;
constexpr std::string_view kQrTarget = "Qr";
constexpr std::string_view kProductTarget = "ProductOfElementaryHouseholderReflectors";

// What every builder below needs: the element type, the batch dimensions
// and whether new shapes get the default layout.
struct Context {
  Module* module = nullptr;
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> batch;
  bool layout = false;

  int64_t nb() const { return static_cast<int64_t>(batch.size()); }
  // The batch dimensions followed by `minor`.
  std::vector<int64_t> Dims(std::initializer_list<int64_t> minor) const {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), minor.begin(), minor.end());
    return dims;
  }
  // 0 .. nb-1, then `extra`.
  std::vector<int64_t> BatchIds(std::initializer_list<int64_t> extra = {}) const {
    std::vector<int64_t> ids(batch.size());
    for (size_t d = 0; d < ids.size(); ++d) ids[d] = static_cast<int64_t>(d);
    ids.insert(ids.end(), extra.begin(), extra.end());
    return ids;
  }
};

Instruction* Scalar(const Context& c, Computation* computation, double value, PrimitiveType type) {
  return MakeScalarConstant(computation, type, value, c.layout);
}

absl::StatusOr<Instruction*> Zeros(const Context& c, Computation* computation,
                                   std::span<const int64_t> dims) {
  return MakeFull(computation, c.type, 0, dims, c.layout);
}

Instruction* Iota(const Context& c, Computation* computation, std::vector<int64_t> dims,
                  int64_t dimension) {
  return MakeIota(computation, PrimitiveType::kS32, std::move(dims), dimension, c.layout);
}

// An s32 scalar broadcast to `dims` (for comparing with an iota).
absl::StatusOr<Instruction*> Splat(Instruction* scalar, std::span<const int64_t> dims) {
  return MakeBroadcast(scalar, dims, {});
}

// The identity matrix [rows, cols] of the element type, broadcast over the
// batch dimensions.
absl::StatusOr<Instruction*> Identity(const Context& c, Computation* computation, int64_t rows,
                                      int64_t cols) {
  HLOGYM_ASSIGN(eye, IdentityMatrix(computation, c.type, rows, cols, c.layout));
  return MakeBroadcast(eye, c.Dims({rows, cols}), std::vector<int64_t>{c.nb(), c.nb() + 1});
}

// True where row + diagonal >= col over x's two minor dimensions: the lower
// triangle with its diagonal shifted by `diagonal` (-1: strictly lower).
absl::StatusOr<Instruction*> LowerMask(const Context& c, Instruction* x, int64_t diagonal) {
  return TriangleMask(x->parent(), x->shape().dimensions(), diagonal, ComparisonDirection::kGe,
                      c.layout);
}

// Elements [e0, e1) of the minor dimension of every vector.
absl::StatusOr<Instruction*> SliceVector(Instruction* x, int64_t e0, int64_t e1) {
  std::vector<SliceDimension> slice;
  const auto& dims = x->shape().dimensions();
  for (size_t d = 0; d + 1 < dims.size(); ++d) slice.push_back({0, dims[d], 1});
  slice.push_back({e0, e1, 1});
  return MakeSlice(x, slice);
}

// Start indices for x: zeros for the leading dimensions, then `minor`.
std::vector<Instruction*> Starts(const Context& c, Instruction* x,
                                 const std::vector<Instruction*>& minor) {
  std::vector<Instruction*> starts;
  const int64_t rank = x->shape().rank();
  for (int64_t d = 0; d + static_cast<int64_t>(minor.size()) < rank; ++d) {
    starts.push_back(Scalar(c, x->parent(), 0, PrimitiveType::kS32));
  }
  starts.insert(starts.end(), minor.begin(), minor.end());
  return starts;
}

absl::StatusOr<Instruction*> DynamicSlice(Instruction* x, const std::vector<Instruction*>& starts,
                                          const std::vector<int64_t>& sizes) {
  std::vector<Shape> start_shapes;
  for (Instruction* start : starts) start_shapes.push_back(start->shape());
  HLOGYM_ASSIGN(shape, InferDynamicSliceShape(x->shape(), start_shapes, sizes));
  auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice, shape);
  ds->AppendOperand(x);
  for (Instruction* start : starts) ds->AppendOperand(start);
  ds->mutable_attrs().dynamic_slice_sizes = sizes;
  return AddWithLayoutOf(x->parent(), std::move(ds), x);
}

absl::StatusOr<Instruction*> UpdateVector(const Context& c, Instruction* x, Instruction* update,
                                          int64_t e) {
  return UpdateAt(
      x, update,
      Starts(c, x, {Scalar(c, x->parent(), static_cast<double>(e), PrimitiveType::kS32)}));
}

// Multiplies (or otherwise combines) x[batch..., rest...] with a per-batch
// value v[batch...] broadcast over the rest.
absl::StatusOr<Instruction*> WithPerBatch(const Context& c, Opcode opcode, Instruction* x,
                                          Instruction* v) {
  HLOGYM_ASSIGN(spread, MakeBroadcast(v, x->shape().dimensions(), c.BatchIds()));
  return MakeBinary(opcode, x, spread);
}

struct Reflector {
  Instruction* v;     // [batch..., m], 1 at k, zero before it
  Instruction* tau;   // [batch...]
  Instruction* beta;  // [batch...]
};

// The Householder reflector H = I - tau v v^T with H x = (x[:k], beta, 0...)
// for the column vectors x[batch..., m] and the (dynamic, s32) position k:
// the static-shape form of LAPACK's dlarfg where everything at or above k is
// masked out of the norm.
absl::StatusOr<Reflector> House(const Context& c, Instruction* x, Instruction* k, int64_t m) {
  Computation* computation = x->parent();
  const PrimitiveType type = c.type;
  const std::vector<int64_t> vector_dims = c.Dims({m});
  HLOGYM_ASSIGN(alpha_slice, DynamicSlice(x, Starts(c, x, {k}), c.Dims({1})));
  HLOGYM_ASSIGN(alpha, MakeReshape(alpha_slice, c.batch));

  // x with elements 0..k zeroed.
  Instruction* iota = Iota(c, computation, {m}, 0);
  HLOGYM_ASSIGN(k_m, Splat(k, std::vector<int64_t>{m}));
  HLOGYM_ASSIGN(after_k, MakeCompare(ComparisonDirection::kGt, iota, k_m));
  HLOGYM_ASSIGN(after_k_f, MakeConvert(after_k, type));
  HLOGYM_ASSIGN(after_k_b, MakeBroadcast(after_k_f, vector_dims, std::vector<int64_t>{c.nb()}));
  HLOGYM_ASSIGN(x_after_k, MakeBinary(Opcode::kMultiply, x, after_k_b));

  // sigma = |x[k+1:]|^2.
  HLOGYM_ASSIGN(squares, MakeBinary(Opcode::kMultiply, x_after_k, x_after_k));
  Computation* add = AddScalarBinaryComputation(*c.module, "add", Opcode::kAdd, type, c.layout);
  HLOGYM_ASSIGN(sigma, MakeReduce(squares, Scalar(c, computation, 0, type),
                                  std::vector<int64_t>{c.nb()}, add));

  // mu = sqrt(alpha^2 + sigma), scaled by max(|alpha|, sqrt(sigma)) against
  // overflow, 0 when both are 0.
  HLOGYM_ASSIGN(root_sigma, MakeUnary(Opcode::kSqrt, sigma));
  HLOGYM_ASSIGN(abs_alpha, MakeUnary(Opcode::kAbs, alpha));
  HLOGYM_ASSIGN(abs_root, MakeUnary(Opcode::kAbs, root_sigma));
  HLOGYM_ASSIGN(w, MakeBinary(Opcode::kMaximum, abs_alpha, abs_root));
  HLOGYM_ASSIGN(scaled_alpha, MakeBinary(Opcode::kDivide, abs_alpha, w));
  HLOGYM_ASSIGN(scaled_root, MakeBinary(Opcode::kDivide, abs_root, w));
  HLOGYM_ASSIGN(sq_alpha, MakeBinary(Opcode::kMultiply, scaled_alpha, scaled_alpha));
  HLOGYM_ASSIGN(sq_root, MakeBinary(Opcode::kMultiply, scaled_root, scaled_root));
  HLOGYM_ASSIGN(sum, MakeBinary(Opcode::kAdd, sq_alpha, sq_root));
  HLOGYM_ASSIGN(norm, MakeUnary(Opcode::kSqrt, sum));
  HLOGYM_ASSIGN(w_norm, MakeBinary(Opcode::kMultiply, w, norm));
  HLOGYM_ASSIGN(zero_b, MakeFull(computation, type, 0, c.batch, c.layout));
  HLOGYM_ASSIGN(w_zero, MakeCompare(ComparisonDirection::kEq, w, zero_b));
  HLOGYM_ASSIGN(mu, MakeSelect(w_zero, zero_b, w_norm));

  // beta = -sign(alpha) mu (sign(0) = +1), or alpha itself when sigma = 0.
  HLOGYM_ASSIGN(sigma_zero, MakeCompare(ComparisonDirection::kEq, sigma, zero_b));
  HLOGYM_ASSIGN(negative, MakeCompare(ComparisonDirection::kLt, alpha, zero_b));
  HLOGYM_ASSIGN(one_b, MakeFull(computation, type, 1, c.batch, c.layout));
  HLOGYM_ASSIGN(minus_one_b, MakeFull(computation, type, -1, c.batch, c.layout));
  HLOGYM_ASSIGN(sign, MakeSelect(negative, one_b, minus_one_b));
  HLOGYM_ASSIGN(signed_mu, MakeBinary(Opcode::kMultiply, sign, mu));
  HLOGYM_ASSIGN(beta, MakeSelect(sigma_zero, alpha, signed_mu));

  // tau = (beta - alpha) / beta, 0 when sigma = 0.
  HLOGYM_ASSIGN(beta_minus_alpha, MakeBinary(Opcode::kSubtract, beta, alpha));
  HLOGYM_ASSIGN(tau_raw, MakeBinary(Opcode::kDivide, beta_minus_alpha, beta));
  HLOGYM_ASSIGN(tau, MakeSelect(sigma_zero, zero_b, tau_raw));

  // v = e_k + x[k+1:] / (alpha - beta); any divisor will do when sigma = 0.
  HLOGYM_ASSIGN(alpha_minus_beta, MakeBinary(Opcode::kSubtract, alpha, beta));
  HLOGYM_ASSIGN(divisor, MakeSelect(sigma_zero, one_b, alpha_minus_beta));
  HLOGYM_ASSIGN(at_k, MakeCompare(ComparisonDirection::kEq, iota, k_m));
  HLOGYM_ASSIGN(at_k_f, MakeConvert(at_k, type));
  HLOGYM_ASSIGN(e_k, MakeBroadcast(at_k_f, vector_dims, std::vector<int64_t>{c.nb()}));
  HLOGYM_ASSIGN(tail, WithPerBatch(c, Opcode::kDivide, x_after_k, divisor));
  HLOGYM_ASSIGN(v, MakeBinary(Opcode::kAdd, e_k, tail));
  return Reflector{v, tau, beta};
}

struct Factored {
  Instruction* a;     // R above the diagonal, the Householder vectors below
  Instruction* taus;  // [batch..., min(m, n)]
};

// The unblocked factorization of a[batch..., m, n] (m >= n inside the
// blocked algorithm): a counted loop over the columns j that computes the
// reflector of column j, applies it to the columns after j and rewrites
// column j with beta on the diagonal and v below it.
absl::StatusOr<Factored> QrBlock(const Context& c, Instruction* a) {
  Computation* computation = a->parent();
  const int64_t rank = a->shape().rank();
  const int64_t m = a->shape().dimensions(rank - 2);
  const int64_t n = a->shape().dimensions(rank - 1);
  const int64_t p = std::min(m, n);
  const std::vector<int64_t> matrix = c.Dims({m, n});
  HLOGYM_ASSIGN(taus0, Zeros(c, computation, c.Dims({p})));
  auto body =
      [&](Instruction* j,
          const std::vector<Instruction*>& state) -> absl::StatusOr<std::vector<Instruction*>> {
    Computation* body = j->parent();
    Instruction* body_a = state[0];
    Instruction* taus = state[1];
    HLOGYM_ASSIGN(x, DynamicSlice(body_a, Starts(c, body_a, {j}), c.Dims({m, 1})));
    HLOGYM_ASSIGN(column, MakeReshape(x, c.Dims({m})));
    HLOGYM_ASSIGN(house, House(c, column, j, m));
    const Reflector& h = house;

    // a[:, j+1:] -= tau v (v^T a[:, j+1:]), with the columns up to j masked.
    Instruction* col_iota = Iota(c, body, matrix, c.nb() + 1);
    HLOGYM_ASSIGN(j_matrix, Splat(j, matrix));
    HLOGYM_ASSIGN(later, MakeCompare(ComparisonDirection::kLt, j_matrix, col_iota));
    HLOGYM_ASSIGN(zeros, Zeros(c, body, matrix));
    HLOGYM_ASSIGN(masked, MakeSelect(later, body_a, zeros));
    HLOGYM_ASSIGN(v_row, MakeReshape(h.v, c.Dims({1, m})));
    HLOGYM_ASSIGN(va, BatchDot(v_row, false, masked, false));  // [.., 1, n]
    HLOGYM_ASSIGN(vva, BatchDot(v_row, true, va, false));      // [.., m, n]
    HLOGYM_ASSIGN(tau_vva, WithPerBatch(c, Opcode::kMultiply, vva, h.tau));
    HLOGYM_ASSIGN(updated, MakeBinary(Opcode::kSubtract, body_a, tau_vva));

    // Column j: the old values above the diagonal, beta on it, v below.
    Instruction* row_iota = Iota(c, body, {m, 1}, 0);
    const std::vector<int64_t> minor_ids = {c.nb(), c.nb() + 1};
    HLOGYM_ASSIGN(j_m1, Splat(j, std::vector<int64_t>{m, 1}));
    HLOGYM_ASSIGN(before, MakeCompare(ComparisonDirection::kLt, row_iota, j_m1));
    HLOGYM_ASSIGN(before_f, MakeConvert(before, c.type));
    HLOGYM_ASSIGN(before_b, MakeBroadcast(before_f, c.Dims({m, 1}), minor_ids));
    HLOGYM_ASSIGN(kept, MakeBinary(Opcode::kMultiply, x, before_b));
    HLOGYM_ASSIGN(on, MakeCompare(ComparisonDirection::kEq, row_iota, j_m1));
    HLOGYM_ASSIGN(on_f, MakeConvert(on, c.type));
    HLOGYM_ASSIGN(on_b, MakeBroadcast(on_f, c.Dims({m, 1}), minor_ids));
    HLOGYM_ASSIGN(diagonal, WithPerBatch(c, Opcode::kMultiply, on_b, h.beta));
    HLOGYM_ASSIGN(new_x0, MakeBinary(Opcode::kAdd, kept, diagonal));
    Instruction* vector_iota = Iota(c, body, {m}, 0);
    HLOGYM_ASSIGN(j_m, Splat(j, std::vector<int64_t>{m}));
    HLOGYM_ASSIGN(after, MakeCompare(ComparisonDirection::kGt, vector_iota, j_m));
    HLOGYM_ASSIGN(after_b, MakeBroadcast(after, c.Dims({m}), std::vector<int64_t>{c.nb()}));
    HLOGYM_ASSIGN(zero_v, Zeros(c, body, c.Dims({m})));
    HLOGYM_ASSIGN(below, MakeSelect(after_b, h.v, zero_v));
    HLOGYM_ASSIGN(below_b, MakeBroadcast(below, c.Dims({m, 1}), c.BatchIds({c.nb()})));
    HLOGYM_ASSIGN(new_x, MakeBinary(Opcode::kAdd, new_x0, below_b));
    HLOGYM_ASSIGN(new_x_flat, MakeReshape(new_x, c.Dims({m})));
    HLOGYM_ASSIGN(new_x_b, MakeBroadcast(new_x_flat, matrix, c.BatchIds({c.nb()})));
    HLOGYM_ASSIGN(is_j, MakeCompare(ComparisonDirection::kEq, col_iota, j_matrix));
    HLOGYM_ASSIGN(new_a, MakeSelect(is_j, new_x_b, updated));

    // taus[j] = tau.
    const std::vector<int64_t> taus_dims = c.Dims({p});
    Instruction* taus_iota = Iota(c, body, taus_dims, c.nb());
    HLOGYM_ASSIGN(j_p, Splat(j, taus_dims));
    HLOGYM_ASSIGN(at_j, MakeCompare(ComparisonDirection::kEq, taus_iota, j_p));
    HLOGYM_ASSIGN(taus_zeros, Zeros(c, body, taus_dims));
    HLOGYM_ASSIGN(tau_b, WithPerBatch(c, Opcode::kAdd, taus_zeros, h.tau));
    HLOGYM_ASSIGN(tau_update, MakeSelect(at_j, tau_b, taus_zeros));
    HLOGYM_ASSIGN(new_taus, MakeBinary(Opcode::kAdd, taus, tau_update));
    return std::vector<Instruction*>{new_a, new_taus};
  };
  HLOGYM_ASSIGN(results, MakeCountedLoop(computation, p, {a, taus0}, body));
  return Factored{(results)[0], (results)[1]};
}

// T[batch..., k, k] with I + Y T Y^T = H_0 ... H_{k-1} for the unit lower
// trapezoidal Y[batch..., rows, k] and taus[batch..., k]: T starts as the
// identity and column j becomes T (the column j of
// -tau_j (strict upper part of Y^T Y + I)).
absl::StatusOr<Instruction*> CompactWy(const Context& c, Instruction* y, Instruction* taus,
                                       int64_t k) {
  Computation* computation = y->parent();
  const std::vector<int64_t> square = c.Dims({k, k});
  HLOGYM_ASSIGN(negated, MakeUnary(Opcode::kNegate, taus));
  HLOGYM_ASSIGN(tau_scale, MakeBroadcast(negated, square, c.BatchIds({c.nb() + 1})));
  HLOGYM_ASSIGN(eye, Identity(c, computation, k, k));
  HLOGYM_ASSIGN(yty, BatchDot(y, true, y, false));
  HLOGYM_ASSIGN(lower, LowerMask(c, yty, 0));
  HLOGYM_ASSIGN(zeros, Zeros(c, computation, square));
  HLOGYM_ASSIGN(strict_upper, MakeSelect(lower, zeros, yty));
  HLOGYM_ASSIGN(with_eye, MakeBinary(Opcode::kAdd, strict_upper, eye));
  HLOGYM_ASSIGN(vtv, MakeBinary(Opcode::kMultiply, with_eye, tau_scale));
  auto body =
      [&](Instruction* j,
          const std::vector<Instruction*>& state) -> absl::StatusOr<std::vector<Instruction*>> {
    Instruction* t = state[0];
    Instruction* body_vtv = state[1];
    Computation* body = j->parent();
    Instruction* zero = Scalar(c, body, 0, PrimitiveType::kS32);
    HLOGYM_ASSIGN(column, DynamicSlice(body_vtv, Starts(c, body_vtv, {zero, j}), c.Dims({k, 1})));
    HLOGYM_ASSIGN(z, BatchDot(t, false, column, false));
    HLOGYM_ASSIGN(new_t, UpdateAt(t, z, Starts(c, t, {zero, j})));
    return std::vector<Instruction*>{new_t, body_vtv};
  };
  HLOGYM_ASSIGN(results, MakeCountedLoop(computation, k, {eye, vtv}, body));
  return (results)[0];
}

// I[rows, k] + the strict lower triangle of `block`: the Householder vectors
// with their implicit unit diagonal.
absl::StatusOr<Instruction*> Vectors(const Context& c, Instruction* block) {
  const int64_t rank = block->shape().rank();
  const int64_t rows = block->shape().dimensions(rank - 2);
  const int64_t k = block->shape().dimensions(rank - 1);
  HLOGYM_ASSIGN(eye, Identity(c, block->parent(), rows, k));
  HLOGYM_ASSIGN(strict_lower, LowerMask(c, block, -1));
  HLOGYM_ASSIGN(zeros, Zeros(c, block->parent(), block->shape().dimensions()));
  HLOGYM_ASSIGN(selected, MakeSelect(strict_lower, block, zeros));
  return MakeBinary(Opcode::kAdd, eye, selected);
}

// The blocked factorization of a[batch..., m, n]: the tuple (a', taus).
absl::StatusOr<Instruction*> BuildQr(const Context& c, Instruction* a) {
  Computation* computation = a->parent();
  const int64_t rank = a->shape().rank();
  const int64_t m = a->shape().dimensions(rank - 2);
  const int64_t n = a->shape().dimensions(rank - 1);
  const int64_t p = std::min(m, n);
  HLOGYM_ASSIGN(taus0, Zeros(c, computation, c.Dims({p})));
  Instruction* taus = taus0;
  for (int64_t i = 0; i < p; i += kBlockSize) {
    const int64_t k = std::min(kBlockSize, p - i);
    HLOGYM_ASSIGN(block, SliceMinor(a, i, m, i, i + k));
    HLOGYM_ASSIGN(factored, QrBlock(c, block));
    HLOGYM_ASSIGN(y, Vectors(c, factored.a));
    HLOGYM_ASSIGN(with_block, UpdateMinor(a, factored.a, i, i, c.layout));
    a = with_block;
    HLOGYM_ASSIGN(with_taus, UpdateVector(c, taus, factored.taus, i));
    taus = with_taus;
    HLOGYM_ASSIGN(t, CompactWy(c, y, factored.taus, k));
    if (i + k < n) {
      // a[i:, i+k:] += (Y T^T) (Y^T a[i:, i+k:]) applies the block's
      // transpose to the trailing columns.
      HLOGYM_ASSIGN(yt, BatchDot(y, false, t, true));
      HLOGYM_ASSIGN(panel, SliceMinor(a, i, m, i + k, n));
      HLOGYM_ASSIGN(ytp, BatchDot(y, true, panel, false));
      HLOGYM_ASSIGN(update, BatchDot(yt, false, ytp, false));
      HLOGYM_ASSIGN(new_panel, MakeBinary(Opcode::kAdd, panel, update));
      HLOGYM_ASSIGN(with_panel, UpdateMinor(a, new_panel, i, i + k, c.layout));
      a = with_panel;
    }
  }
  std::vector<Instruction*> elements = {a, taus};
  return MakeTuple(computation, elements);
}

// Q[batch..., m, n] = H_0 ... H_{p-1} I[m, n], the blocks applied last to
// first.
absl::StatusOr<Instruction*> BuildProduct(const Context& c, Instruction* a, Instruction* taus) {
  Computation* computation = a->parent();
  const int64_t rank = a->shape().rank();
  const int64_t m = a->shape().dimensions(rank - 2);
  const int64_t n = a->shape().dimensions(rank - 1);
  const int64_t p = taus->shape().dimensions(taus->shape().rank() - 1);
  HLOGYM_ASSIGN(q0, Identity(c, computation, m, n));
  Instruction* q = q0;
  if (p == 0) return q;
  for (int64_t i = ((p - 1) / kBlockSize) * kBlockSize; i >= 0; i -= kBlockSize) {
    const int64_t k = std::min(kBlockSize, p - i);
    HLOGYM_ASSIGN(block, SliceMinor(a, i, m, i, i + k));
    HLOGYM_ASSIGN(y, Vectors(c, block));
    HLOGYM_ASSIGN(taus_block, SliceVector(taus, i, i + k));
    HLOGYM_ASSIGN(t, CompactWy(c, y, taus_block, k));
    // q[i:, i:] += Y T (Y^T q[i:, i:]).
    HLOGYM_ASSIGN(panel, SliceMinor(q, i, m, i, n));
    HLOGYM_ASSIGN(ytq, BatchDot(y, true, panel, false));
    HLOGYM_ASSIGN(tytq, BatchDot(t, false, ytq, false));
    HLOGYM_ASSIGN(update, BatchDot(y, false, tytq, false));
    HLOGYM_ASSIGN(new_panel, MakeBinary(Opcode::kAdd, panel, update));
    HLOGYM_ASSIGN(with_panel, UpdateMinor(q, new_panel, i, i, c.layout));
    q = with_panel;
  }
  return q;
}

bool IsQrTarget(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kCustomCall) return false;
  const std::string& target = instruction->attrs().custom_call_target;
  return target == kQrTarget || target == kProductTarget;
}

// Whether the custom call is one this pass expands: f32/f64 static array
// operands. A mis-shaped one of those is an error; other element types (and
// dynamic shapes) are left alone.
absl::StatusOr<bool> Expandable(const Instruction* instruction) {
  if (!IsQrTarget(instruction)) return false;
  const std::string& target = instruction->attrs().custom_call_target;
  if (instruction->operand_count() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(instruction->name(), ": custom-call ", target, " needs an operand"));
  }
  const Shape& a = instruction->operand(0)->shape();
  if (!a.IsArray() ||
      (a.element_type() != PrimitiveType::kF32 && a.element_type() != PrimitiveType::kF64)) {
    return false;
  }
  if (!a.is_static() || !instruction->shape().is_static()) return false;
  for (const Instruction* operand : instruction->operands()) {
    if (!operand->shape().is_static()) return false;
  }
  auto bad = [&](std::string_view expected) {
    std::string operands;
    for (const Instruction* operand : instruction->operands()) {
      absl::StrAppend(&operands, operands.empty() ? "" : ", ", operand->shape().ToString(false));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        instruction->name(), ": custom-call ", target, " expects ", std::string(expected),
        "; got (", operands, ") -> ", instruction->shape().ToString(false)));
  };
  const int64_t rank = a.rank();
  if (target == kQrTarget) {
    constexpr std::string_view kExpected =
        "one operand a[..., m, n] and the result (a's shape, taus[..., min(m, n)])";
    if (instruction->operand_count() != 1 || rank < 2) return bad(kExpected);
    const Shape& shape = instruction->shape();
    if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) return bad(kExpected);
    const Shape& out = shape.tuple_shapes(0);
    const Shape& taus = shape.tuple_shapes(1);
    std::vector<int64_t> taus_dims(a.dimensions().begin(), a.dimensions().end() - 2);
    taus_dims.push_back(std::min(a.dimensions(rank - 2), a.dimensions(rank - 1)));
    if (!out.IsArray() || out.element_type() != a.element_type() ||
        out.dimensions() != a.dimensions() || !taus.IsArray() ||
        taus.element_type() != a.element_type() || taus.dimensions() != taus_dims) {
      return bad(kExpected);
    }
    return true;
  }
  constexpr std::string_view kExpected =
      "operands a[..., m, n] with m >= n and taus[..., k] with k <= n, and a result of a's "
      "shape";
  if (instruction->operand_count() != 2 || rank < 2) return bad(kExpected);
  const Shape& taus = instruction->operand(1)->shape();
  const Shape& shape = instruction->shape();
  const int64_t m = a.dimensions(rank - 2), n = a.dimensions(rank - 1);
  if (!taus.IsArray() || taus.element_type() != a.element_type() || taus.rank() != rank - 1 ||
      m < n || !shape.IsArray() || shape.element_type() != a.element_type() ||
      shape.dimensions() != a.dimensions()) {
    return bad(kExpected);
  }
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (taus.dimensions(d) != a.dimensions(d)) return bad(kExpected);
  }
  if (taus.dimensions(rank - 2) > n) return bad(kExpected);
  return true;
}

absl::StatusOr<Computation*> BuildComputation(Module& module, const Instruction& call,
                                              const std::string& name) {
  ExpansionComputation expansion = StartExpansion(module, name, call, {"a", "taus"});
  const std::vector<Instruction*>& parameters = expansion.parameters;
  const Shape& shape = call.operand(0)->shape();
  Context c;
  c.module = &module;
  c.type = shape.element_type();
  c.batch.assign(shape.dimensions().begin(), shape.dimensions().end() - 2);
  c.layout = shape.has_layout();
  HLOGYM_ASSIGN(root, call.attrs().custom_call_target == kQrTarget
                          ? BuildQr(c, parameters[0])
                          : BuildProduct(c, parameters[0], parameters[1]));
  expansion.owned->set_root_instruction(root);
  return module.AddComputation(std::move(expansion.owned));
}

// One callee per target and operand shapes.
std::string CalleeName(const Instruction& custom_call) {
  std::string name = absl::StrCat("xla.", custom_call.attrs().custom_call_target, "_",
                                  custom_call.operand(0)->shape().ToString(false));
  if (custom_call.attrs().custom_call_target == kProductTarget) {
    absl::StrAppend(&name, "_", custom_call.operand(1)->shape().ToString(false));
  }
  return HloIdentifier(std::move(name));
}

}  // namespace

absl::StatusOr<bool> QrExpander::Run(Module& module) {
  return ExpandIntoCalls(
      module,
      {.expandable = [](const Instruction& instruction) { return Expandable(&instruction); },
       .callee_name = CalleeName,
       .build = [&](const Instruction& call,
                    const std::string& name) { return BuildComputation(module, call, name); }});
}

bool QrExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

}  // namespace hlogym
