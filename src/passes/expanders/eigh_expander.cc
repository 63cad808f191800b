#include "passes/expanders/eigh_expander.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/backend_configs.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/expanders/matrix_builders.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_util.h"

namespace hlogym {
namespace {

constexpr std::string_view kEighTarget = "Eigh";

// Builds the ops of one expansion: element type, batch dimensions, layout
// and the scalar reducers (shared by every computation of the expansion).
class Builder {
 public:
  Builder(Module& module, PrimitiveType type, std::vector<int64_t> batch, bool layout)
      : module_(module), type_(type), batch_(std::move(batch)), layout_(layout) {}

  PrimitiveType type() const { return type_; }
  bool layout() const { return layout_; }
  int64_t rank() const { return static_cast<int64_t>(batch_.size()) + 2; }
  int64_t row_dim() const { return rank() - 2; }
  int64_t col_dim() const { return rank() - 1; }
  std::vector<int64_t> Matrix(int64_t rows, int64_t cols) const {
    std::vector<int64_t> dims = batch_;
    dims.push_back(rows);
    dims.push_back(cols);
    return dims;
  }
  std::vector<int64_t> Vector(int64_t k) const {
    std::vector<int64_t> dims = batch_;
    dims.push_back(k);
    return dims;
  }
  // The batch dimensions followed by `extra` (broadcast dimension maps).
  std::vector<int64_t> BatchMap(std::vector<int64_t> extra = {}) const {
    std::vector<int64_t> map(batch_.size());
    for (size_t d = 0; d < map.size(); ++d) map[d] = static_cast<int64_t>(d);
    map.insert(map.end(), extra.begin(), extra.end());
    return map;
  }

  Instruction* Scalar(Computation* computation, double value,
                      std::optional<PrimitiveType> type = std::nullopt) {
    return MakeScalarConstant(computation, type.value_or(type_), value, layout_);
  }
  absl::StatusOr<Instruction*> Full(Computation* computation, double value,
                                    std::span<const int64_t> dims,
                                    std::optional<PrimitiveType> type = std::nullopt) {
    if (dims.empty()) return Scalar(computation, value, type);
    return MakeFull(computation, type.value_or(type_), value, dims, layout_);
  }
  // A constant-filled array shaped like `x`.
  absl::StatusOr<Instruction*> Like(Instruction* x, double value) {
    return Full(x->parent(), value, x->shape().dimensions(), x->shape().element_type());
  }

  absl::StatusOr<Instruction*> Iota(Computation* computation, std::span<const int64_t> dims,
                                    int64_t dimension) {
    return MakeIota(computation, PrimitiveType::kS32,
                    std::vector<int64_t>(dims.begin(), dims.end()), dimension, layout_);
  }

  // pred[batch..., k, k]: row `direction` column, e.g. kEq for the diagonal.
  absl::StatusOr<Instruction*> TriangleMask(Computation* computation, int64_t k,
                                            ComparisonDirection direction) {
    const std::vector<int64_t> dims = Matrix(k, k);
    HLOGYM_ASSIGN(row, Iota(computation, dims, row_dim()));
    HLOGYM_ASSIGN(col, Iota(computation, dims, col_dim()));
    return MakeCompare(direction, row, col);
  }
  // The diagonal mask of k x k matrices, one per computation.
  absl::StatusOr<Instruction*> DiagonalMask(Computation* computation, int64_t k) {
    Instruction*& mask = diagonal_masks_[{computation, k}];
    if (mask == nullptr) {
      HLOGYM_ASSIGN(made, TriangleMask(computation, k, ComparisonDirection::kEq));
      mask = made;
    }
    return mask;
  }

  // Reduces `dims` of `x` with `op` from its identity (or from `init`).
  absl::StatusOr<Instruction*> Reduce(Instruction* x, std::vector<int64_t> dims, Opcode op,
                                      std::optional<double> init_value = std::nullopt) {
    if (dims.empty()) return x;
    const PrimitiveType type = x->shape().element_type();
    double init = 0;
    if (op == Opcode::kMaximum) init = -std::numeric_limits<double>::infinity();
    if (op == Opcode::kMinimum) init = std::numeric_limits<double>::infinity();
    init = init_value.value_or(init);
    Computation*& reducer = reducers_[{op, type}];
    if (reducer == nullptr) {
      const char* name = op == Opcode::kAdd       ? "eigh.add"
                         : op == Opcode::kMaximum ? "eigh.max"
                         : op == Opcode::kMinimum ? "eigh.min"
                                                  : "eigh.or";
      reducer = AddScalarBinaryComputation(module_, name, op, type, layout_);
    }
    return MakeReduce(x, Scalar(x->parent(), init, type), dims, reducer);
  }

  // The diagonals of [batch..., k, k] as [batch..., k].
  absl::StatusOr<Instruction*> GetDiagonal(Instruction* x) {
    const int64_t k = x->shape().dimensions().back();
    HLOGYM_ASSIGN(mask, DiagonalMask(x->parent(), k));
    HLOGYM_ASSIGN(zeros, Like(x, 0));
    HLOGYM_ASSIGN(diagonal_only, MakeSelect(mask, x, zeros));
    return Reduce(diagonal_only, {col_dim()}, Opcode::kAdd);
  }
  // `x` with its diagonals replaced by `d` ([batch..., k]).
  absl::StatusOr<Instruction*> SetDiagonal(Instruction* x, Instruction* d) {
    const int64_t k = x->shape().dimensions().back();
    HLOGYM_ASSIGN(mask, DiagonalMask(x->parent(), k));
    HLOGYM_ASSIGN(d_b, MakeBroadcast(d, x->shape().dimensions(), BatchMap({col_dim()})));
    return MakeSelect(mask, d_b, x);
  }
  absl::StatusOr<Instruction*> ZeroDiagonal(Instruction* x) {
    const int64_t k = x->shape().dimensions().back();
    HLOGYM_ASSIGN(mask, DiagonalMask(x->parent(), k));
    HLOGYM_ASSIGN(zeros, Like(x, 0));
    return MakeSelect(mask, zeros, x);
  }
  // A per-row ([batch..., k] indexed by row) or per-column factor broadcast
  // to [batch..., k, k].
  absl::StatusOr<Instruction*> AlongRows(Instruction* d) {
    const int64_t k = d->shape().dimensions().back();
    return MakeBroadcast(d, Matrix(k, k), BatchMap({row_dim()}));
  }
  absl::StatusOr<Instruction*> AlongCols(Instruction* d) {
    const int64_t k = d->shape().dimensions().back();
    return MakeBroadcast(d, Matrix(k, k), BatchMap({col_dim()}));
  }

  // Elements [start, limit) of dimension `dim`.
  absl::StatusOr<Instruction*> SliceDim(Instruction* x, int64_t dim, int64_t start, int64_t limit) {
    std::vector<SliceDimension> slice;
    for (int64_t d : x->shape().dimensions()) slice.push_back({0, d, 1});
    slice[dim] = {start, limit, 1};
    return MakeSlice(x, slice);
  }
  absl::StatusOr<Instruction*> SliceMinor(Instruction* x, int64_t r0, int64_t r1, int64_t c0,
                                          int64_t c1) {
    std::vector<SliceDimension> slice;
    for (int64_t d : x->shape().dimensions()) slice.push_back({0, d, 1});
    slice[row_dim()] = {r0, r1, 1};
    slice[col_dim()] = {c0, c1, 1};
    return MakeSlice(x, slice);
  }
  absl::StatusOr<Instruction*> Concat(std::vector<Instruction*> parts, int64_t dim) {
    std::vector<Instruction*> nonempty;
    for (Instruction* part : parts) {
      if (part->shape().dimensions(dim) > 0) nonempty.push_back(part);
    }
    if (nonempty.size() == 1) return nonempty[0];
    return MakeConcatenate(nonempty, dim);
  }
  absl::StatusOr<Instruction*> TransposeMinor(Instruction* x) {
    std::vector<int64_t> permutation(rank());
    for (int64_t d = 0; d < rank(); ++d) permutation[d] = d;
    std::swap(permutation[row_dim()], permutation[col_dim()]);
    return MakeTranspose(x, permutation);
  }

  // a*b op c*d, op add or subtract.
  absl::StatusOr<Instruction*> Combine(Instruction* a, Instruction* b, Opcode op, Instruction* c,
                                       Instruction* d) {
    HLOGYM_ASSIGN(ab, MakeBinary(Opcode::kMultiply, a, b));
    HLOGYM_ASSIGN(cd, MakeBinary(Opcode::kMultiply, c, d));
    return MakeBinary(op, ab, cd);
  }

  Module& module() { return module_; }

 private:
  Module& module_;
  PrimitiveType type_;
  std::vector<int64_t> batch_;
  bool layout_;
  absl::flat_hash_map<std::pair<Computation*, int64_t>, Instruction*> diagonal_masks_;
  absl::flat_hash_map<std::pair<Opcode, PrimitiveType>, Computation*> reducers_;
};

// The four quadrants of the matrix being diagonalized and of the
// (transposed) eigenvector matrix, each [batch..., k, k].
struct Quadrants {
  Instruction* tl;
  Instruction* tr;
  Instruction* bl;
  Instruction* br;
};

std::vector<Instruction*> Flatten(const Quadrants& w, const Quadrants& v) {
  return {w.tl, w.tr, w.bl, w.br, v.tl, v.tr, v.bl, v.br};
}

// The tournament step between two halves along `dim`: the first element of
// `first` stays, the first of `second` moves in behind it, the rest of
// `first` shifts one on and its last element moves to the end of `second`,
// whose remaining elements shift one back.
absl::Status Permute(Builder& b, Instruction*& first, Instruction*& second, int64_t dim) {
  const int64_t k = first->shape().dimensions(dim);
  if (k <= 1) return absl::OkStatus();
  HLOGYM_ASSIGN(f0, b.SliceDim(first, dim, 0, 1));
  HLOGYM_ASSIGN(f_mid, b.SliceDim(first, dim, 1, k - 1));
  HLOGYM_ASSIGN(f_last, b.SliceDim(first, dim, k - 1, k));
  HLOGYM_ASSIGN(s0, b.SliceDim(second, dim, 0, 1));
  HLOGYM_ASSIGN(s_rest, b.SliceDim(second, dim, 1, k));
  HLOGYM_ASSIGN(new_first, b.Concat({f0, s0, f_mid}, dim));
  HLOGYM_ASSIGN(new_second, b.Concat({s_rest, f_last}, dim));
  first = new_first;
  second = new_second;
  return absl::OkStatus();
}

struct Rotation {
  Instruction* c;  // [batch..., k]
  Instruction* s;
  Instruction* rt1;  // the new diagonal of tl
  Instruction* rt2;  // the new diagonal of br
};

// The symmetric Schur decomposition of the k 2x2 problems on the diagonals
// (tl_ii, tr_ii; tr_ii, br_ii): with J = [[c, s], [-s, c]], J^T A J is
// diag(rt1, rt2).
absl::StatusOr<Rotation> SchurRotations(Builder& b, const Quadrants& w) {
  HLOGYM_ASSIGN(p, b.GetDiagonal(w.tl));
  HLOGYM_ASSIGN(off, b.GetDiagonal(w.tr));
  HLOGYM_ASSIGN(q, b.GetDiagonal(w.br));
  HLOGYM_ASSIGN(zero, b.Like(p, 0));
  HLOGYM_ASSIGN(one, b.Like(p, 1));
  HLOGYM_ASSIGN(two, b.Like(p, 2));
  HLOGYM_ASSIGN(diff, MakeBinary(Opcode::kSubtract, q, p));
  HLOGYM_ASSIGN(twice_off, MakeBinary(Opcode::kMultiply, two, off));
  HLOGYM_ASSIGN(tau, MakeBinary(Opcode::kDivide, diff, twice_off));
  HLOGYM_ASSIGN(tau_sq, MakeBinary(Opcode::kMultiply, tau, tau));
  HLOGYM_ASSIGN(one_plus, MakeBinary(Opcode::kAdd, one, tau_sq));
  HLOGYM_ASSIGN(root, MakeUnary(Opcode::kSqrt, one_plus));
  HLOGYM_ASSIGN(neg_root, MakeUnary(Opcode::kNegate, root));
  HLOGYM_ASSIGN(nonnegative, MakeCompare(ComparisonDirection::kGe, tau, zero));
  HLOGYM_ASSIGN(signed_root, MakeSelect(nonnegative, root, neg_root));
  HLOGYM_ASSIGN(denominator, MakeBinary(Opcode::kAdd, tau, signed_root));
  HLOGYM_ASSIGN(t_raw, MakeBinary(Opcode::kDivide, one, denominator));
  // A negligible off-diagonal element is not rotated away (also covers the
  // 0/0 of a zero padding row).
  HLOGYM_ASSIGN(abs_off, MakeUnary(Opcode::kAbs, off));
  HLOGYM_ASSIGN(abs_p, MakeUnary(Opcode::kAbs, p));
  HLOGYM_ASSIGN(abs_q, MakeUnary(Opcode::kAbs, q));
  HLOGYM_ASSIGN(smaller, MakeBinary(Opcode::kMinimum, abs_p, abs_q));
  HLOGYM_ASSIGN(tiny, b.Like(p, 0.1 * std::numeric_limits<float>::epsilon()));
  HLOGYM_ASSIGN(bound, MakeBinary(Opcode::kMultiply, tiny, smaller));
  HLOGYM_ASSIGN(negligible, MakeCompare(ComparisonDirection::kLe, abs_off, bound));
  HLOGYM_ASSIGN(t, MakeSelect(negligible, zero, t_raw));
  HLOGYM_ASSIGN(t_sq, MakeBinary(Opcode::kMultiply, t, t));
  HLOGYM_ASSIGN(one_plus_t, MakeBinary(Opcode::kAdd, one, t_sq));
  HLOGYM_ASSIGN(c, MakeUnary(Opcode::kRsqrt, one_plus_t));
  HLOGYM_ASSIGN(s, MakeBinary(Opcode::kMultiply, t, c));
  HLOGYM_ASSIGN(t_off, MakeBinary(Opcode::kMultiply, t, off));
  HLOGYM_ASSIGN(rt1, MakeBinary(Opcode::kSubtract, p, t_off));
  HLOGYM_ASSIGN(rt2, MakeBinary(Opcode::kAdd, q, t_off));
  return Rotation{c, s, rt1, rt2};
}

// Rows p (top) and q (bottom) become c*p - s*q and s*p + c*q (J^T from the
// left).
absl::Status RotateRows(Builder& b, const Rotation& rotation, Quadrants& x) {
  HLOGYM_ASSIGN(c, b.AlongRows(rotation.c));
  HLOGYM_ASSIGN(s, b.AlongRows(rotation.s));
  HLOGYM_ASSIGN(tl, b.Combine(x.tl, c, Opcode::kSubtract, x.bl, s));
  HLOGYM_ASSIGN(tr, b.Combine(x.tr, c, Opcode::kSubtract, x.br, s));
  HLOGYM_ASSIGN(bl, b.Combine(x.tl, s, Opcode::kAdd, x.bl, c));
  HLOGYM_ASSIGN(br, b.Combine(x.tr, s, Opcode::kAdd, x.br, c));
  x = {tl, tr, bl, br};
  return absl::OkStatus();
}

// Columns p (left) and q (right) become c*p - s*q and s*p + c*q (J from the
// right).
absl::Status RotateCols(Builder& b, const Rotation& rotation, Quadrants& x) {
  HLOGYM_ASSIGN(c, b.AlongCols(rotation.c));
  HLOGYM_ASSIGN(s, b.AlongCols(rotation.s));
  HLOGYM_ASSIGN(tl, b.Combine(x.tl, c, Opcode::kSubtract, x.tr, s));
  HLOGYM_ASSIGN(tr, b.Combine(x.tl, s, Opcode::kAdd, x.tr, c));
  HLOGYM_ASSIGN(bl, b.Combine(x.bl, c, Opcode::kSubtract, x.br, s));
  HLOGYM_ASSIGN(br, b.Combine(x.bl, s, Opcode::kAdd, x.br, c));
  x = {tl, tr, bl, br};
  return absl::OkStatus();
}

// One round: every diagonal pair rotated at once, then the tournament
// permutation of rows and columns.
absl::Status Round(Builder& b, Quadrants& w, Quadrants& v) {
  HLOGYM_ASSIGN(rotation, SchurRotations(b, w));
  HLOGYM_RETURN_IF_ERROR(RotateRows(b, rotation, w));
  HLOGYM_RETURN_IF_ERROR(RotateCols(b, rotation, w));
  HLOGYM_ASSIGN(tl, b.SetDiagonal(w.tl, rotation.rt1));
  HLOGYM_ASSIGN(tr, b.ZeroDiagonal(w.tr));
  HLOGYM_ASSIGN(bl, b.ZeroDiagonal(w.bl));
  HLOGYM_ASSIGN(br, b.SetDiagonal(w.br, rotation.rt2));
  w = {tl, tr, bl, br};
  const int64_t rows = b.row_dim(), cols = b.col_dim();
  for (auto [first, second, dim] :
       {std::tuple{&w.tl, &w.tr, cols}, std::tuple{&w.bl, &w.br, cols},
        std::tuple{&w.tl, &w.bl, rows}, std::tuple{&w.tr, &w.br, rows}}) {
    HLOGYM_RETURN_IF_ERROR(Permute(b, *first, *second, dim));
  }
  HLOGYM_RETURN_IF_ERROR(RotateRows(b, rotation, v));
  HLOGYM_RETURN_IF_ERROR(Permute(b, v.tl, v.bl, rows));
  return Permute(b, v.tr, v.br, rows);
}

// Sum of squares of `x` over the two matrix dimensions: [batch...].
absl::StatusOr<Instruction*> SquaredNorm(Builder& b, std::vector<Instruction*> blocks) {
  Instruction* total = nullptr;
  for (Instruction* block : blocks) {
    HLOGYM_ASSIGN(square, MakeBinary(Opcode::kMultiply, block, block));
    if (total == nullptr) {
      total = square;
    } else {
      HLOGYM_ASSIGN(sum, MakeBinary(Opcode::kAdd, total, square));
      total = sum;
    }
  }
  return b.Reduce(total, {b.row_dim(), b.col_dim()}, Opcode::kAdd);
}

// Whether another sweep is due: some batch element has an off-diagonal
// squared norm above tol^2 times its squared Frobenius norm.
absl::StatusOr<Instruction*> NotConverged(Builder& b, const Quadrants& w, float tol) {
  HLOGYM_ASSIGN(frobenius, SquaredNorm(b, {w.tl, w.tr, w.bl, w.br}));
  HLOGYM_ASSIGN(tl_off, b.ZeroDiagonal(w.tl));
  HLOGYM_ASSIGN(br_off, b.ZeroDiagonal(w.br));
  HLOGYM_ASSIGN(off_diagonal, SquaredNorm(b, {tl_off, w.tr, w.bl, br_off}));
  const double tol_sq = static_cast<double>(tol) * static_cast<double>(tol);
  HLOGYM_ASSIGN(tol_b, b.Like(frobenius, tol_sq));
  HLOGYM_ASSIGN(bound, MakeBinary(Opcode::kMultiply, frobenius, tol_b));
  HLOGYM_ASSIGN(above, MakeCompare(ComparisonDirection::kLt, bound, off_diagonal));
  std::vector<int64_t> all(above->shape().rank());
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return b.Reduce(above, all, Opcode::kOr);
}

using StateFn = std::function<absl::StatusOr<std::vector<Instruction*>>(
    const std::vector<Instruction*>& state)>;
using CondFn = std::function<absl::StatusOr<Instruction*>(const std::vector<Instruction*>& state)>;

// A while loop over the tuple of `init` with a data-dependent condition.
absl::StatusOr<std::vector<Instruction*>> MakeWhile(Builder& b, Computation* computation,
                                                    const std::vector<Instruction*>& init,
                                                    const CondFn& cond_fn, const StateFn& body_fn) {
  Module& module = b.module();
  Instruction* init_tuple = MakeTuple(computation, init);
  const Shape state_shape = init_tuple->shape();
  auto unpack = [&](Computation* c) -> absl::StatusOr<std::vector<Instruction*>> {
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter, state_shape,
                                                   module.UniqueName("sweep_state"));
    parameter->mutable_attrs().parameter_number = 0;
    Instruction* param = c->AddInstruction(std::move(parameter));
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < state_shape.tuple_shapes_size(); ++i) {
      HLOGYM_ASSIGN(element, MakeGetTupleElement(param, i));
      elements.push_back(element);
    }
    return elements;
  };
  auto cond = std::make_unique<Computation>(module.UniqueName("eigh_sweeps_cond"));
  cond->set_parent(&module);
  {
    HLOGYM_ASSIGN(state, unpack(cond.get()));
    HLOGYM_ASSIGN(root, cond_fn(state));
    cond->set_root_instruction(root);
  }
  auto body = std::make_unique<Computation>(module.UniqueName("eigh_sweeps_body"));
  body->set_parent(&module);
  {
    HLOGYM_ASSIGN(state, unpack(body.get()));
    HLOGYM_ASSIGN(next, body_fn(state));
    for (size_t i = 0; i < next.size(); ++i) {
      if (i >= state.size() || !next[i]->shape().Compatible(state[i]->shape())) {
        return absl::InternalError("eigh_expander: sweep changed the loop state's shape");
      }
    }
    Instruction* root = MakeTuple(body.get(), next);
    root->set_shape(state_shape);
    body->set_root_instruction(root);
  }
  Computation* cond_added = module.AddComputation(std::move(cond));
  Computation* body_added = module.AddComputation(std::move(body));
  auto loop = std::make_unique<Instruction>(Opcode::kWhile, state_shape);
  loop->AppendOperand(init_tuple);
  loop->mutable_called_computations() = {cond_added, body_added};
  Instruction* added = computation->AddInstruction(std::move(loop));
  std::vector<Instruction*> outputs;
  for (int64_t i = 0; i < state_shape.tuple_shapes_size(); ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(added, i));
    outputs.push_back(element);
  }
  return outputs;
}

// The eigendecomposition of the matrices `a` (already symmetric and scaled,
// n >= 2): (v, w) before rescaling and sorting.
absl::StatusOr<std::pair<Instruction*, Instruction*>> Jacobi(Builder& b, Instruction* a,
                                                             const EighConfig& config) {
  Computation* computation = a->parent();
  const int64_t n = a->shape().dimensions().back();
  const int64_t k = (n + 1) / 2;
  HLOGYM_ASSIGN(tl0, b.SliceMinor(a, 0, k, 0, k));
  HLOGYM_ASSIGN(tr0, b.SliceMinor(a, 0, k, k, n));
  HLOGYM_ASSIGN(bl0, b.SliceMinor(a, k, n, 0, k));
  HLOGYM_ASSIGN(br0, b.SliceMinor(a, k, n, k, n));
  Quadrants w{tl0, tr0, bl0, br0};
  if (n % 2 == 1) {
    // A zero row and column make the halves equal; they stay zero (their
    // rotations are the identity) and are cut off at the end.
    Instruction* zero = b.Scalar(computation, 0);
    auto pad = [&](Instruction* x, int64_t rows, int64_t cols) -> absl::StatusOr<Instruction*> {
      std::vector<PaddingDimension> padding(b.rank());
      padding[b.row_dim()].high = rows;
      padding[b.col_dim()].high = cols;
      return MakePad(x, zero, padding);
    };
    HLOGYM_ASSIGN(tr, pad(w.tr, 0, 1));
    HLOGYM_ASSIGN(bl, pad(w.bl, 1, 0));
    HLOGYM_ASSIGN(br, pad(w.br, 1, 1));
    w = {w.tl, tr, bl, br};
  }
  HLOGYM_ASSIGN(mask, b.DiagonalMask(computation, k));
  HLOGYM_ASSIGN(identity, MakeConvert(mask, b.type()));
  HLOGYM_ASSIGN(zeros, b.Full(computation, 0, b.Matrix(k, k)));
  Quadrants v{identity, zeros, zeros, identity};

  const int64_t max_iter =
      std::clamp<int64_t>(config.max_iter, 0, std::numeric_limits<int32_t>::max());
  std::vector<Instruction*> init = {b.Scalar(computation, 0, PrimitiveType::kS32)};
  for (Instruction* x : Flatten(w, v)) init.push_back(x);
  auto cond = [&](const std::vector<Instruction*>& state) -> absl::StatusOr<Instruction*> {
    Instruction* limit =
        b.Scalar(state[0]->parent(), static_cast<double>(max_iter), PrimitiveType::kS32);
    HLOGYM_ASSIGN(more_sweeps, MakeCompare(ComparisonDirection::kLt, state[0], limit));
    HLOGYM_ASSIGN(not_converged,
                  NotConverged(b, Quadrants{state[1], state[2], state[3], state[4]}, config.tol));
    return MakeBinary(Opcode::kAnd, more_sweeps, not_converged);
  };
  auto body =
      [&](const std::vector<Instruction*>& state) -> absl::StatusOr<std::vector<Instruction*>> {
    Computation* body_computation = state[0]->parent();
    std::vector<Instruction*> blocks(state.begin() + 1, state.end());
    HLOGYM_ASSIGN(sweep, MakeCountedLoop(body_computation, 2 * k - 1, blocks,
                                         [&](Instruction*, const std::vector<Instruction*>& s)
                                             -> absl::StatusOr<std::vector<Instruction*>> {
                                           Quadrants rw{s[0], s[1], s[2], s[3]};
                                           Quadrants rv{s[4], s[5], s[6], s[7]};
                                           HLOGYM_RETURN_IF_ERROR(Round(b, rw, rv));
                                           return Flatten(rw, rv);
                                         }));
    Instruction* one = b.Scalar(body_computation, 1, PrimitiveType::kS32);
    HLOGYM_ASSIGN(next_iter, MakeBinary(Opcode::kAdd, state[0], one));
    std::vector<Instruction*> next = {next_iter};
    next.insert(next.end(), sweep.begin(), sweep.end());
    return next;
  };
  HLOGYM_ASSIGN(final_state, MakeWhile(b, computation, init, cond, body));
  w = {final_state[1], final_state[2], final_state[3], final_state[4]};
  v = {final_state[5], final_state[6], final_state[7], final_state[8]};

  HLOGYM_ASSIGN(w_top, b.GetDiagonal(w.tl));
  HLOGYM_ASSIGN(w_bottom, b.GetDiagonal(w.br));
  HLOGYM_ASSIGN(values, b.Concat({w_top, w_bottom}, b.row_dim()));
  HLOGYM_ASSIGN(v_top, b.Concat({v.tl, v.tr}, b.col_dim()));
  HLOGYM_ASSIGN(v_bottom, b.Concat({v.bl, v.br}, b.col_dim()));
  HLOGYM_ASSIGN(vectors, b.Concat({v_top, v_bottom}, b.row_dim()));
  Instruction* w_out = values;
  Instruction* v_out = vectors;
  if (n % 2 == 1) {
    HLOGYM_ASSIGN(w_cut, b.SliceDim(values, b.row_dim(), 0, n));
    HLOGYM_ASSIGN(v_cut, b.SliceMinor(vectors, 0, n, 0, n));
    w_out = w_cut;
    v_out = v_cut;
  }
  // The rows of the accumulated rotation are the eigenvectors.
  HLOGYM_ASSIGN(v_t, b.TransposeMinor(v_out));
  return std::make_pair(v_t, w_out);
}

// The comparator of the eigenvalue sort: (w, v) pairs ordered by w.
Computation* LessThanComparator(Builder& b) {
  Module& module = b.module();
  auto comparator = std::make_unique<Computation>(module.UniqueName("eigh.compare_lt"));
  comparator->set_parent(&module);
  std::vector<Instruction*> parameters;
  for (const char* name : {"w.lhs", "w.rhs", "v.lhs", "v.rhs"}) {
    Shape shape = Shape::Scalar(b.type());
    if (b.layout()) shape.SetDefaultLayout();
    auto parameter =
        std::make_unique<Instruction>(Opcode::kParameter, shape, module.UniqueName(name));
    parameter->mutable_attrs().parameter_number = static_cast<int64_t>(parameters.size());
    parameters.push_back(comparator->AddInstruction(std::move(parameter)));
  }
  Shape pred = Shape::Scalar(PrimitiveType::kPred);
  if (b.layout()) pred.SetDefaultLayout();
  auto compare = std::make_unique<Instruction>(Opcode::kCompare, pred);
  compare->AppendOperand(parameters[0]);
  compare->AppendOperand(parameters[1]);
  compare->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  Instruction* root = comparator->AddInstruction(std::move(compare));
  comparator->set_root_instruction(root);
  return module.AddComputation(std::move(comparator));
}

absl::StatusOr<Computation*> BuildComputation(Module& module, const Instruction& eigh,
                                              const EighConfig& config, const std::string& name) {
  const Shape& shape = eigh.operand(0)->shape();
  ExpansionComputation expansion = StartExpansion(module, name, eigh, {"a"});
  Computation* computation = expansion.owned.get();
  Instruction* a = expansion.parameters[0];
  Builder b(module, shape.element_type(),
            std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end() - 2),
            shape.has_layout());
  const int64_t n = shape.dimensions().back();
  Instruction* v = nullptr;
  Instruction* w = nullptr;
  if (n <= 1) {
    HLOGYM_ASSIGN(ones, b.Full(computation, 1, shape.dimensions()));
    HLOGYM_ASSIGN(diagonal, MakeReshape(a, b.Vector(n)));
    v = ones;
    w = diagonal;
  } else {
    // The symmetric matrix of the chosen triangle.
    HLOGYM_ASSIGN(
        keep, b.TriangleMask(computation, n,
                             config.lower ? ComparisonDirection::kGe : ComparisonDirection::kLe));
    HLOGYM_ASSIGN(mirrored, b.TransposeMinor(a));
    HLOGYM_ASSIGN(symmetric, MakeSelect(keep, a, mirrored));
    // Divided by its largest magnitude.
    HLOGYM_ASSIGN(magnitude, MakeUnary(Opcode::kAbs, symmetric));
    HLOGYM_ASSIGN(largest, b.Reduce(magnitude, {b.row_dim(), b.col_dim()}, Opcode::kMaximum, 0.0));
    HLOGYM_ASSIGN(zero, b.Like(largest, 0));
    HLOGYM_ASSIGN(one, b.Like(largest, 1));
    HLOGYM_ASSIGN(is_zero, MakeCompare(ComparisonDirection::kEq, largest, zero));
    HLOGYM_ASSIGN(scale, MakeSelect(is_zero, one, largest));
    HLOGYM_ASSIGN(scale_a, MakeBroadcast(scale, shape.dimensions(), b.BatchMap()));
    HLOGYM_ASSIGN(scaled, MakeBinary(Opcode::kDivide, symmetric, scale_a));
    HLOGYM_ASSIGN(decomposed, Jacobi(b, scaled, config));
    HLOGYM_ASSIGN(scale_w, MakeBroadcast(scale, b.Vector(n), b.BatchMap()));
    HLOGYM_ASSIGN(rescaled, MakeBinary(Opcode::kMultiply, decomposed.second, scale_w));
    v = decomposed.first;
    w = rescaled;
    if (config.sort) {
      HLOGYM_ASSIGN(w_rows, MakeBroadcast(w, shape.dimensions(), b.BatchMap({b.col_dim()})));
      auto sort =
          std::make_unique<Instruction>(Opcode::kSort, Shape::Tuple({w_rows->shape(), v->shape()}));
      sort->AppendOperand(w_rows);
      sort->AppendOperand(v);
      sort->mutable_attrs().dimensions = {b.col_dim()};
      sort->mutable_attrs().is_stable = false;
      sort->mutable_called_computations() = {LessThanComparator(b)};
      Instruction* sorted = computation->AddInstruction(std::move(sort));
      HLOGYM_ASSIGN(w_sorted, MakeGetTupleElement(sorted, 0));
      HLOGYM_ASSIGN(v_sorted, MakeGetTupleElement(sorted, 1));
      HLOGYM_ASSIGN(w_diagonal, b.GetDiagonal(w_sorted));
      v = v_sorted;
      w = w_diagonal;
    }
    // hlogym's sign convention (see the header): negate a column whose
    // max + min is negative.
    HLOGYM_ASSIGN(column_max, b.Reduce(v, {b.row_dim()}, Opcode::kMaximum));
    HLOGYM_ASSIGN(column_min, b.Reduce(v, {b.row_dim()}, Opcode::kMinimum));
    HLOGYM_ASSIGN(balance, MakeBinary(Opcode::kAdd, column_max, column_min));
    HLOGYM_ASSIGN(zeros, b.Like(balance, 0));
    HLOGYM_ASSIGN(ones, b.Like(balance, 1));
    HLOGYM_ASSIGN(minus_ones, b.Like(balance, -1));
    HLOGYM_ASSIGN(negative, MakeCompare(ComparisonDirection::kLt, balance, zeros));
    HLOGYM_ASSIGN(sign, MakeSelect(negative, minus_ones, ones));
    HLOGYM_ASSIGN(sign_b, b.AlongCols(sign));
    HLOGYM_ASSIGN(canonical, MakeBinary(Opcode::kMultiply, v, sign_b));
    v = canonical;
  }
  std::vector<Instruction*> results = {v, w};
  Instruction* root = MakeTuple(computation, results);
  computation->set_root_instruction(root);
  return module.AddComputation(std::move(expansion.owned));
}

// nullopt: not an Eigh call this pass expands (left unchanged). An error:
// an Eigh call of a supported type that is malformed.
absl::StatusOr<std::optional<EighConfig>> Check(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall ||
      instruction.attrs().custom_call_target != kEighTarget) {
    return std::nullopt;
  }
  auto invalid = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(instruction.name(), ": Eigh custom call ", std::string(what)));
  };
  if (instruction.operand_count() != 1) return invalid("must have one operand");
  const Shape& a = instruction.operand(0)->shape();
  if (!a.IsArray()) return invalid("operand must be an array");
  const PrimitiveType type = a.element_type();
  if ((type != PrimitiveType::kF32 && type != PrimitiveType::kF64) || !a.is_static() ||
      !instruction.shape().is_static()) {
    return std::nullopt;  // complex, narrow floats, ...: not expanded
  }
  const int64_t rank = a.rank();
  if (rank < 2 || a.dimensions(rank - 1) != a.dimensions(rank - 2)) {
    return invalid(absl::StrCat("operand must be [..., n, n], got ", a.ToString(false)));
  }
  std::vector<int64_t> w_dims(a.dimensions().begin(), a.dimensions().end() - 1);
  const Shape expected = Shape::Tuple({Shape(type, a.dimensions()), Shape(type, w_dims)});
  if (!instruction.shape().Compatible(expected)) {
    return invalid(absl::StrCat("result must be ", expected.ToString(false), ", got ",
                                instruction.shape().ToString(false)));
  }
  std::optional<EighConfig> config = ParseEighConfig(instruction);
  if (!config) {
    const RawAttribute* raw = instruction.attrs().FindRaw("backend_config");
    return invalid(
        absl::StrCat("backend_config must be \"lower,sort_eigenvalues,max_iter,tol\", got ",
                     raw == nullptr ? "none" : raw->value));
  }
  return config;
}

}  // namespace

absl::StatusOr<bool> EighExpander::Run(Module& module) {
  std::vector<std::pair<Instruction*, EighConfig>> matched;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      HLOGYM_ASSIGN(checked, Check(*instruction));
      if (checked.has_value()) matched.emplace_back(instruction.get(), *checked);
    }
  }
  if (matched.empty()) return false;
  absl::flat_hash_map<std::string, Computation*> cache;
  for (auto& [eigh, config] : matched) {
    std::string name = absl::StrCat("xla.Eigh_", eigh->operand(0)->shape().ToString(false));
    name = HloIdentifier(std::move(name));
    // XLA keys its cache on the name alone; the config changes the result.
    const std::string key = absl::StrCat(name, "/", config.lower, ",", config.sort, ",",
                                         config.max_iter, ",", config.tol);
    Computation*& callee = cache[key];
    if (callee == nullptr) {
      HLOGYM_ASSIGN(built, BuildComputation(module, *eigh, config, name));
      callee = built;
    }
    HLOGYM_RETURN_IF_ERROR(ReplaceWithCall(eigh, callee));
  }
  module.SortComputationsCalleesFirst();
  return true;
}

bool EighExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

}  // namespace hlogym
