// custom_call_target="Eigh": the symmetric eigendecomposition JAX lowers
// jnp.linalg.eigh to where no solver library is linked (jax/_src/lax/
// linalg.py, eigh_jacobi; XLA's EighExpander gives it its meaning).
//  - operand a[..., n, n] (f32/f64 here); result the tuple (v[..., n, n],
//    w[..., n]): A = V diag(w) V^T, the eigenvectors are the columns of v.
//  - backend_config is the plain string "lower,sort_eigenvalues,max_iter,tol"
//    (JAX writes "1,1,100,1e-6"): only the `lower` triangle (diagonal
//    included) of each matrix is read, the other one is taken as its mirror.
//    max_iter and tol only steer XLA's Jacobi iteration and are ignored here
//    (Eigen's SelfAdjointEigenSolver runs to convergence in double).
//  - w is in ascending order even when sort_eigenvalues is 0: XLA then
//    leaves the order its Jacobi sweeps produce, which is not a property of
//    the matrix, so no evaluator can reproduce it.
//  - Sign convention (shared with the eigh_expander pass, which applies the
//    same normalization to its result): each eigenvector is negated when
//    max_i v_i + min_i v_i < 0, i.e. a component of largest magnitude is
//    positive (a positive one wins a tie in magnitude). This makes v unique
//    for distinct eigenvalues up to rounding near such ties; inside a
//    repeated eigenvalue the basis stays whatever Eigen returns.
//  - n = 1 gives v = 1 and w = a, as XLA's expansion does; a matrix Eigen
//    cannot decompose (NaN/inf input) gives NaN everywhere.
// lapack_{s,d}syevd_ffi, jaxlib's LAPACK kernel on CPU (jnp.linalg.eigh since
// JAX 0.4.32), computes the same: operand a, attributes mode ('V' 86) and
// uplo ('L' 76 / 'U' 85), results (v, w, info s32[batch dims]); so do
// {cu,hip}solver_syevd_ffi on GPU, with the attribute lower (true/false)
// instead of uplo (algorithm only steers the solver); info 0 or,
// where Eigen does not converge, 1. Its eigenvectors take the sign
// convention above, not LAPACK's (which is an accident of its algorithm):
// outputs that depend on an eigenvector's sign do not match XLA's.
#include "eval/eigh_custom_call.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "Eigen/Eigenvalues"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "hlo/backend_configs.h"

namespace hlogym::eval {
namespace {

// v and w of every matrix of `a`; `ok` (one per matrix) is false where Eigen
// could not decompose it (then v and w are NaN).
template <typename T>
std::pair<ValuePtr, ValuePtr> Decompose(const Shape& v_shape, const Shape& w_shape, const Value& a,
                                        int64_t n, bool lower, std::vector<bool>& ok) {
  auto v_out = NewArray(v_shape);
  auto w_out = NewArray(w_shape);
  const T* src = a.as<T>();
  T* v = v_out->template mutable_as<T>();
  T* w = w_out->template mutable_as<T>();
  const int64_t batch = n == 0 ? 0 : a.element_count() / (n * n);
  ok.assign(batch, true);
  Eigen::MatrixXd m(n, n);
  for (int64_t b = 0; b < batch; ++b) {
    const T* x = src + b * n * n;
    T* vb = v + b * n * n;
    T* wb = w + b * n;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t hi = std::max(i, j), lo = std::min(i, j);
        m(i, j) = static_cast<double>(lower ? x[hi * n + lo] : x[lo * n + hi]);
      }
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m, Eigen::ComputeEigenvectors);
    if (solver.info() != Eigen::Success) {
      ok[b] = false;
      std::fill(vb, vb + n * n, std::numeric_limits<T>::quiet_NaN());
      std::fill(wb, wb + n, std::numeric_limits<T>::quiet_NaN());
      continue;
    }
    const Eigen::MatrixXd& vectors = solver.eigenvectors();
    for (int64_t j = 0; j < n; ++j) {
      const double sign = vectors.col(j).maxCoeff() + vectors.col(j).minCoeff() < 0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < n; ++i) vb[i * n + j] = static_cast<T>(sign * vectors(i, j));
      wb[j] = static_cast<T>(solver.eigenvalues()(j));
    }
  }
  return {v_out, w_out};
}

}  // namespace

std::optional<absl::StatusOr<ValuePtr>> EvalEighCustomCall(const Instruction& instruction,
                                                           Operands operands) {
  const std::string& target = instruction.attrs().custom_call_target;
  const bool solver = target == "cusolver_syevd_ffi" || target == "hipsolver_syevd_ffi";
  const bool lapack = solver || target == "lapack_ssyevd_ffi" || target == "lapack_dsyevd_ffi";
  if ((target != "Eigh" && !lapack) || operands.size() != 1) return std::nullopt;
  const Value& a = *operands[0];
  const PrimitiveType type = a.shape.element_type();
  if (!a.shape.IsArray() || !IsF32OrF64(type)) {
    return std::nullopt;
  }
  bool lower = true;
  if (solver) {
    const std::optional<int64_t> lower_attribute = FfiAttribute(instruction, "lower");
    if (!lower_attribute) return std::nullopt;
    lower = *lower_attribute != 0;
  } else if (lapack) {
    const std::optional<int64_t> uplo = FfiAttribute(instruction, "uplo");
    if (!uplo || (*uplo != 'L' && *uplo != 'U')) return std::nullopt;
    lower = *uplo == 'L';
  } else {
    const std::optional<EighConfig> config = ParseEighConfig(instruction);
    if (!config) return std::nullopt;
    lower = config->lower;
  }
  const int64_t rank = a.shape.rank();
  if (rank < 2 || a.shape.dimensions(rank - 1) != a.shape.dimensions(rank - 2)) {
    return absl::StatusOr<ValuePtr>(absl::InvalidArgumentError(
        absl::StrCat(instruction.name(), ": ", target, " operand must be [..., n, n], got ",
                     a.shape.ToString())));
  }
  const int64_t n = a.shape.dimensions(rank - 1);
  std::vector<int64_t> w_dims(a.shape.dimensions().begin(), a.shape.dimensions().end() - 1);
  const std::vector<int64_t> batch_dims(w_dims.begin(), w_dims.end() - 1);
  const Shape& shape = instruction.shape();
  const int results = lapack ? 3 : 2;
  auto dims_of = [&](int i) {
    return std::vector<int64_t>(shape.tuple_shapes(i).dimensions().begin(),
                                shape.tuple_shapes(i).dimensions().end());
  };
  if (!shape.IsTuple() || shape.tuple_shapes_size() != results ||
      !shape.tuple_shapes(0).IsArray() || !shape.tuple_shapes(1).IsArray() ||
      shape.tuple_shapes(0).element_type() != type ||
      shape.tuple_shapes(1).element_type() != type ||
      shape.tuple_shapes(0).dimensions() != a.shape.dimensions() || dims_of(1) != w_dims ||
      (lapack &&
       (!shape.tuple_shapes(2).IsArray() ||
        shape.tuple_shapes(2).element_type() != PrimitiveType::kS32 || dims_of(2) != batch_dims))) {
    return absl::StatusOr<ValuePtr>(absl::InvalidArgumentError(absl::StrCat(
        instruction.name(), ": ", target, " result must be (", a.shape.ToString(false), ", ",
        Shape(type, w_dims).ToString(false),
        lapack ? absl::StrCat(", ", Shape(PrimitiveType::kS32, batch_dims).ToString(false)) : "",
        "), got ", shape.ToString())));
  }
  std::vector<bool> ok;
  auto [v, w] =
      type == PrimitiveType::kF32
          ? Decompose<float>(shape.tuple_shapes(0), shape.tuple_shapes(1), a, n, lower, ok)
          : Decompose<double>(shape.tuple_shapes(0), shape.tuple_shapes(1), a, n, lower, ok);
  if (!lapack) return absl::StatusOr<ValuePtr>(MakeTuple(shape, {v, w}));
  // LAPACK's info: 0, or > 0 where the iteration did not converge (JAX then
  // gives NaN; Eigen's failure stands for it).
  auto info = NewArray(shape.tuple_shapes(2));
  int32_t* info_data = info->mutable_as<int32_t>();
  for (size_t b = 0; b < ok.size(); ++b) info_data[b] = ok[b] ? 0 : 1;
  return absl::StatusOr<ValuePtr>(MakeTuple(shape, {v, w, info}));
}

}  // namespace hlogym::eval
