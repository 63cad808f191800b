#include "eval/qr_custom_calls.h"

#include <algorithm>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "Eigen/QR"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hlogym::eval {
namespace {

std::string Signature(const Instruction& instruction, Operands operands) {
  std::string text = "(";
  for (size_t i = 0; i < operands.size(); ++i) {
    absl::StrAppend(&text, i == 0 ? "" : ", ", operands[i]->shape.ToString(false));
  }
  absl::StrAppend(&text, ") -> ", instruction.shape().ToString(false));
  return text;
}

std::vector<int64_t> BatchDims(const Shape& shape) {
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end() - 2);
}

using ColMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;

absl::StatusOr<ValuePtr> Geqrf(const Instruction& instruction, Operands operands) {
  const Value& a = *operands[0];
  const Shape& shape = instruction.shape();
  const int64_t rank = a.shape.rank();
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(instruction.attrs().custom_call_target,
                     " expects a[..., m, n] -> (a's shape, taus[..., min(m, n)]); got ",
                     Signature(instruction, operands)));
  };
  if (operands.size() != 1 || rank < 2 || !shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return bad();
  }
  const int64_t m = a.shape.dimensions(rank - 2), n = a.shape.dimensions(rank - 1);
  const int64_t p = std::min(m, n);
  std::vector<int64_t> taus_dims = BatchDims(a.shape);
  taus_dims.push_back(p);
  const Shape& out_shape = shape.tuple_shapes(0);
  const Shape& taus_shape = shape.tuple_shapes(1);
  if (!out_shape.IsArray() || out_shape.element_type() != a.shape.element_type() ||
      out_shape.dimensions() != a.shape.dimensions() || !taus_shape.IsArray() ||
      taus_shape.element_type() != a.shape.element_type() || taus_shape.dimensions() != taus_dims) {
    return bad();
  }
  // An empty matrix has nothing to factor (and no taus).
  int64_t batch = p == 0 ? 0 : 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batch *= a.shape.dimensions(d);
  std::vector<double> data = ToDoubles(a);
  std::vector<double> taus(taus_shape.ElementCount(), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    ColMat x(m, n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) x(i, j) = data[b * m * n + i * n + j];
    }
    // Eigen's Householder QR stores what LAPACK's geqrf does: beta =
    // -sign(alpha) norm on the diagonal, the essential part of v below it,
    // tau = 0 for an already-zero column.
    Eigen::HouseholderQR<ColMat> qr(x);
    const ColMat& packed = qr.matrixQR();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) data[b * m * n + i * n + j] = packed(i, j);
    }
    for (int64_t j = 0; j < p; ++j) taus[b * p + j] = qr.hCoeffs()(j);
  }
  return MakeTuple(shape, {FromVector(out_shape, data), FromVector(taus_shape, taus)});
}

absl::StatusOr<ValuePtr> Orgqr(const Instruction& instruction, Operands operands) {
  const Value& a = *operands[0];
  const Value& t = *operands[1];
  const Shape& shape = instruction.shape();
  const int64_t rank = a.shape.rank();
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        instruction.attrs().custom_call_target,
        " expects (a[..., m, n] with m >= n, taus[..., k] with k <= n) -> a's shape; got ",
        Signature(instruction, operands)));
  };
  if (rank < 2 || t.shape.rank() != rank - 1 || t.shape.element_type() != a.shape.element_type() ||
      !shape.IsArray() || shape.element_type() != a.shape.element_type() ||
      shape.dimensions() != a.shape.dimensions()) {
    return bad();
  }
  const int64_t m = a.shape.dimensions(rank - 2), n = a.shape.dimensions(rank - 1);
  const int64_t k = t.shape.dimensions(rank - 2);
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (t.shape.dimensions(d) != a.shape.dimensions(d)) return bad();
  }
  if (m < n || k > n) return bad();
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batch *= a.shape.dimensions(d);
  const std::vector<double> av = ToDoubles(a), tv = ToDoubles(t);
  std::vector<double> q(shape.ElementCount(), 0.0);
  std::vector<double> v(m), w(n);
  for (int64_t b = 0; b < batch; ++b) {
    double* Q = q.data() + b * m * n;
    const double* A = av.data() + b * m * n;
    for (int64_t i = 0; i < n; ++i) Q[i * n + i] = 1.0;
    // Q = H_0 (H_1 (... (H_{k-1} I))), H_j = I - tau_j v_j v_j^T touching
    // rows j.. only.
    for (int64_t j = k - 1; j >= 0; --j) {
      const double tau = tv[b * k + j];
      v[j] = 1.0;
      for (int64_t i = j + 1; i < m; ++i) v[i] = A[i * n + j];
      std::fill(w.begin(), w.end(), 0.0);
      for (int64_t i = j; i < m; ++i) {
        for (int64_t c = 0; c < n; ++c) w[c] += v[i] * Q[i * n + c];
      }
      for (int64_t i = j; i < m; ++i) {
        for (int64_t c = 0; c < n; ++c) Q[i * n + c] -= tau * v[i] * w[c];
      }
    }
  }
  return ValuePtr(FromVector(shape, q));
}

}  // namespace

std::optional<absl::StatusOr<ValuePtr>> EvalQrCustomCall(const Instruction& instruction,
                                                         Operands operands) {
  const std::string& target = instruction.attrs().custom_call_target;
  // jaxlib's LAPACK kernels on CPU compute the same (f32 and f64 here).
  const bool qr = target == "Qr" || target == "lapack_sgeqrf_ffi" ||
                  target == "lapack_dgeqrf_ffi" || target == "cusolver_geqrf_ffi" ||
                  target == "hipsolver_geqrf_ffi";
  if (!qr && target != "ProductOfElementaryHouseholderReflectors" &&
      target != "lapack_sorgqr_ffi" && target != "lapack_dorgqr_ffi" &&
      target != "cusolver_orgqr_ffi" && target != "hipsolver_orgqr_ffi") {
    return std::nullopt;
  }
  if (operands.empty() || !operands[0]->shape.IsArray() ||
      !IsF32OrF64(operands[0]->shape.element_type())) {
    return std::nullopt;
  }
  if (qr) return Geqrf(instruction, operands);
  if (operands.size() != 2 || !operands[1]->shape.IsArray()) {
    return absl::StatusOr<ValuePtr>(absl::InvalidArgumentError(absl::StrCat(
        target, " expects two operands (a, taus); got ", Signature(instruction, operands))));
  }
  return Orgqr(instruction, operands);
}

}  // namespace hlogym::eval
