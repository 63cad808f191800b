#include "eval/lapack_custom_calls.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "Eigen/Core"
#include "Eigen/Eigenvalues"
#include "Eigen/SVD"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/backend_configs.h"

namespace hlogym::eval {
namespace {

using Dims = std::vector<int64_t>;

Dims DimsOf(const Shape& shape) {
  return Dims(shape.dimensions().begin(), shape.dimensions().end());
}

// The leading dimensions of `shape` without its last `minor` ones.
Dims LeadingDims(const Shape& shape, int minor) {
  return Dims(shape.dimensions().begin(), shape.dimensions().end() - minor);
}

int64_t Product(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Dims Append(Dims dims, std::initializer_list<int64_t> minor) {
  dims.insert(dims.end(), minor);
  return dims;
}

// A stack of [m, n] matrices: the leading (batch) dimensions, m, n, min(m, n)
// and how many matrices; all 0 for a shape of rank below 2.
struct Matrices {
  Dims batch_dims;
  int64_t m = 0, n = 0, k = 0, count = 0;
};
Matrices MatricesOf(const Shape& shape) {
  const int64_t rank = shape.rank();
  if (rank < 2) return {};
  Matrices s{LeadingDims(shape, 2), shape.dimensions(rank - 2), shape.dimensions(rank - 1)};
  s.k = std::min(s.m, s.n);
  s.count = Product(s.batch_dims);
  return s;
}

// True when `shape` is an array of `type` and exactly `dims`.
bool Is(const Shape& shape, PrimitiveType type, const Dims& dims) {
  return shape.IsArray() && shape.element_type() == type && DimsOf(shape) == dims;
}

absl::Status BadShapes(const Instruction& instruction, Operands operands, const std::string& want) {
  std::string got = "(";
  for (size_t i = 0; i < operands.size(); ++i) {
    absl::StrAppend(&got, i == 0 ? "" : ", ", operands[i]->shape.ToString(false));
  }
  absl::StrAppend(&got, ") -> ", instruction.shape().ToString(false));
  return absl::InvalidArgumentError(absl::StrCat(instruction.name(), ": ",
                                                 instruction.attrs().custom_call_target,
                                                 " expects ", want, "; got ", got));
}

std::shared_ptr<Value> Int32s(const Shape& shape, const std::vector<int32_t>& data) {
  auto out = NewArray(shape);
  std::copy(data.begin(), data.end(), out->mutable_as<int32_t>());
  return out;
}

// LU by partial pivoting of each of the `batch` [m, n] matrices of `a`, in
// double: the packed factors, the 1-based pivot rows (min(m, n) a matrix)
// and LAPACK's info.
struct LuFactors {
  std::vector<double> lu;
  std::vector<int32_t> pivots;  // 1-based
  std::vector<int32_t> info;
};
LuFactors FactorLu(const Value& a, int64_t batch, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  LuFactors f{ToDoubles(a), std::vector<int32_t>(batch * k), std::vector<int32_t>(batch, 0)};
  for (int64_t b = 0; b < batch; ++b) {
    double* A = f.lu.data() + b * m * n;
    auto at = [&](int64_t i, int64_t j) -> double& { return A[i * n + j]; };
    for (int64_t j = 0; j < k; ++j) {
      int64_t pivot = j;
      for (int64_t i = j + 1; i < m; ++i) {
        if (std::abs(at(i, j)) > std::abs(at(pivot, j))) pivot = i;
      }
      f.pivots[b * k + j] = static_cast<int32_t>(pivot + 1);
      if (at(pivot, j) != 0.0) {
        if (pivot != j) {
          for (int64_t c = 0; c < n; ++c) std::swap(at(j, c), at(pivot, c));
        }
        for (int64_t i = j + 1; i < m; ++i) at(i, j) /= at(j, j);
      } else if (f.info[b] == 0) {
        f.info[b] = static_cast<int32_t>(j + 1);
      }
      for (int64_t i = j + 1; i < m; ++i) {
        for (int64_t c = j + 1; c < n; ++c) at(i, c) -= at(i, j) * at(j, c);
      }
    }
  }
  return f;
}

// The permutation of m rows that 0-based `pivots` (k a matrix; row i swapped
// with row pivots[i], in turn) make, per matrix.
std::vector<int32_t> PermutationOf(const int32_t* pivots, int64_t batch, int64_t k, int64_t m) {
  std::vector<int32_t> permutation(batch * m);
  for (int64_t b = 0; b < batch; ++b) {
    int32_t* row = permutation.data() + b * m;
    for (int64_t i = 0; i < m; ++i) row[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < std::min(k, m); ++i) {
      const int32_t j = pivots[b * k + i];
      if (j >= 0 && j < m) std::swap(row[i], row[j]);
    }
  }
  return permutation;
}

// getrf: (lu, 1-based pivots, info); with `tpu` XLA's LuDecomposition:
// (lu, 0-based pivots, the permutation of the m rows).
absl::StatusOr<ValuePtr> Getrf(const Instruction& instruction, Operands operands,
                               bool tpu = false) {
  const Value& a = *operands[0];
  const Shape& shape = instruction.shape();
  const PrimitiveType type = a.shape.element_type();
  const auto [batch_dims, m, n, k, batch] = MatricesOf(a.shape);
  if (a.shape.rank() < 2 || !shape.IsTuple() || shape.tuple_shapes_size() != 3 ||
      !Is(shape.tuple_shapes(0), type, DimsOf(a.shape)) ||
      !Is(shape.tuple_shapes(1), PrimitiveType::kS32, Append(batch_dims, {k})) ||
      !Is(shape.tuple_shapes(2), PrimitiveType::kS32, tpu ? Append(batch_dims, {m}) : batch_dims)) {
    return BadShapes(instruction, operands,
                     tpu ? "a[..., m, n] -> (a's shape, s32[..., min(m, n)], s32[..., m])"
                         : "a[..., m, n] -> (a's shape, s32[..., min(m, n)], s32[...])");
  }
  LuFactors f = FactorLu(a, batch, m, n);
  if (!tpu) {
    return MakeTuple(
        shape, {FromVector(shape.tuple_shapes(0), f.lu), Int32s(shape.tuple_shapes(1), f.pivots),
                Int32s(shape.tuple_shapes(2), f.info)});
  }
  for (int32_t& p : f.pivots) --p;
  return MakeTuple(
      shape, {FromVector(shape.tuple_shapes(0), f.lu), Int32s(shape.tuple_shapes(1), f.pivots),
              Int32s(shape.tuple_shapes(2), PermutationOf(f.pivots.data(), batch, k, m))});
}

// 0-based pivots (row i swapped with row pivots[i], in turn) as the
// permutation they make of the m rows, m the result's last dimension.
absl::StatusOr<ValuePtr> PivotsToPermutation(const Instruction& instruction, Operands operands) {
  const Value& pivots = *operands[0];
  const Shape& shape = instruction.shape();
  const int64_t rank = pivots.shape.rank();
  if (rank < 1 || !Is(pivots.shape, PrimitiveType::kS32, DimsOf(pivots.shape)) ||
      !shape.IsArray() || shape.element_type() != PrimitiveType::kS32 || shape.rank() != rank ||
      LeadingDims(shape, 1) != LeadingDims(pivots.shape, 1)) {
    return BadShapes(instruction, operands, "s32[..., k] -> s32[..., m]");
  }
  const int64_t k = pivots.shape.dimensions(rank - 1), m = shape.dimensions(rank - 1);
  const std::vector<int32_t> permutation =
      PermutationOf(pivots.as<int32_t>(), Product(LeadingDims(shape, 1)), k, m);
  return ValuePtr(Int32s(shape, permutation));
}

// The sign convention of eigh_custom_call.cc: a vector is negated when
// max_i v_i + min_i v_i < 0.
double Sign(const Eigen::VectorXd& v) { return v.maxCoeff() + v.minCoeff() < 0 ? -1.0 : 1.0; }

// `mode`: 'A', 'S' or 'N' (LAPACK's jobz). With `gives_v` the fourth result is
// V (the right singular vectors as columns, cuSOLVER's gesvdj), else Vt.
absl::StatusOr<ValuePtr> Svd(const Instruction& instruction, Operands operands, int64_t mode,
                             bool gives_v = false) {
  const Value& a = *operands[0];
  const Shape& shape = instruction.shape();
  const PrimitiveType type = a.shape.element_type();
  const int64_t rank = a.shape.rank();
  const auto [batch_dims, m, n, k, batch] = MatricesOf(a.shape);
  const bool full = mode == 'A';
  // With mode 'N' LAPACK leaves u and vt alone: JAX gives them either size.
  const bool computed = mode != 'N';
  auto fits = [&](int i, int64_t rows, int64_t cols) {
    const Shape& s = shape.tuple_shapes(i);
    return computed ? Is(s, type, Append(batch_dims, {rows, cols}))
                    : s.IsArray() && s.element_type() == type && s.rank() == rank;
  };
  if (rank < 2 || !shape.IsTuple() || shape.tuple_shapes_size() != 5 ||
      !Is(shape.tuple_shapes(0), type, DimsOf(a.shape)) ||
      !Is(shape.tuple_shapes(1), type, Append(batch_dims, {k})) || !fits(2, m, full ? m : k) ||
      !(gives_v ? fits(3, n, full ? n : k) : fits(3, full ? n : k, n)) ||
      !Is(shape.tuple_shapes(4), PrimitiveType::kS32, batch_dims)) {
    return BadShapes(instruction, operands,
                     gives_v ? "a[..., m, n] -> (a's shape, s[..., min(m, n)], u[..., m, m or "
                               "min(m, n)], v[..., n, n or min(m, n)], s32[...])"
                             : "a[..., m, n] -> (a's shape, s[..., min(m, n)], u[..., m, m or "
                               "min(m, n)], vt[..., n or min(m, n), n], s32[...]) for mode A or S");
  }
  const int64_t u_cols = shape.tuple_shapes(2).dimensions(rank - 1);
  // The right singular vectors returned (k or n); right(r, j): element j of
  // vector r, in Vt's layout or V's.
  const int64_t vt_rows = shape.tuple_shapes(3).dimensions(gives_v ? rank - 1 : rank - 2);
  const std::vector<double> av = ToDoubles(a);
  std::vector<double> s(shape.tuple_shapes(1).ElementCount(), 0.0);
  std::vector<double> u(shape.tuple_shapes(2).ElementCount(), 0.0);
  std::vector<double> vt(shape.tuple_shapes(3).ElementCount(), 0.0);
  std::vector<int32_t> info(batch, 0);
  const unsigned options = !computed ? 0
                                     : (full ? Eigen::ComputeFullU | Eigen::ComputeFullV
                                             : Eigen::ComputeThinU | Eigen::ComputeThinV);
  Eigen::MatrixXd x(m, n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) x(i, j) = av[b * m * n + i * n + j];
    }
    double* sb = s.data() + b * k;
    double* ub = u.data() + b * m * u_cols;
    double* vtb = vt.data() + b * vt_rows * n;
    auto right = [&](int64_t r, int64_t j) -> double& {
      return gives_v ? vtb[j * vt_rows + r] : vtb[r * n + j];
    };
    if (!x.allFinite()) {
      info[b] = 1;
      std::fill(sb, sb + k, std::numeric_limits<double>::quiet_NaN());
      if (computed) {
        std::fill(ub, ub + m * u_cols, std::numeric_limits<double>::quiet_NaN());
        std::fill(vtb, vtb + vt_rows * n, std::numeric_limits<double>::quiet_NaN());
      }
      continue;
    }
    Eigen::BDCSVD<Eigen::MatrixXd> svd(x, options);
    for (int64_t i = 0; i < k; ++i) sb[i] = svd.singularValues()(i);
    if (!computed) continue;
    const Eigen::MatrixXd& U = svd.matrixU();
    const Eigen::MatrixXd& V = svd.matrixV();
    for (int64_t c = 0; c < u_cols; ++c) {
      const double sign = Sign(U.col(c));
      for (int64_t i = 0; i < m; ++i) ub[i * u_cols + c] = sign * U(i, c);
      // A singular pair flips together; V's columns past k pair with none.
      if (c < k) {
        for (int64_t j = 0; j < n; ++j) right(c, j) = sign * V(j, c);
      }
    }
    for (int64_t r = k; r < vt_rows; ++r) {
      const double sign = Sign(V.col(r));
      for (int64_t j = 0; j < n; ++j) right(r, j) = sign * V(j, r);
    }
  }
  return MakeTuple(
      shape,
      {operands[0], FromVector(shape.tuple_shapes(1), s), FromVector(shape.tuple_shapes(2), u),
       FromVector(shape.tuple_shapes(3), vt), Int32s(shape.tuple_shapes(4), info)});
}

// gtsv; with `solution_only` cuSPARSE's gtsv2, whose one result is x (its
// algorithm pivots differently; for a system it can solve, x is the same up
// to rounding).
absl::StatusOr<ValuePtr> Gtsv(const Instruction& instruction, Operands operands,
                              bool solution_only = false) {
  const Shape& shape = instruction.shape();
  const Value& b_in = *operands[3];
  const PrimitiveType type = b_in.shape.element_type();
  const int64_t rank = b_in.shape.rank();
  const Dims batch_dims = rank >= 2 ? LeadingDims(b_in.shape, 2) : Dims();
  const int64_t n = rank >= 2 ? b_in.shape.dimensions(rank - 2) : 0;
  const int64_t nrhs = rank >= 2 ? b_in.shape.dimensions(rank - 1) : 0;
  const Dims diag_dims = Append(batch_dims, {n});
  bool ok =
      rank >= 2 && (solution_only ? Is(shape, type, DimsOf(b_in.shape))
                                  : shape.IsTuple() && shape.tuple_shapes_size() == 5 &&
                                        Is(shape.tuple_shapes(3), type, DimsOf(b_in.shape)) &&
                                        Is(shape.tuple_shapes(4), PrimitiveType::kS32, batch_dims));
  for (int i = 0; ok && i < 3; ++i) {
    ok = Is(operands[i]->shape, type, diag_dims) &&
         (solution_only || Is(shape.tuple_shapes(i), type, diag_dims));
  }
  if (!ok) {
    return BadShapes(instruction, operands,
                     solution_only ? "(dl[..., n], d[..., n], du[..., n], b[..., n, nrhs]) -> "
                                     "b's shape"
                                   : "(dl[..., n], d[..., n], du[..., n], b[..., n, nrhs]) -> "
                                     "(the four operands' shapes, s32[...])");
  }
  const int64_t batch = Product(batch_dims);
  std::vector<double> dl = ToDoubles(*operands[0]), d = ToDoubles(*operands[1]),
                      du = ToDoubles(*operands[2]), x = ToDoubles(b_in);
  std::vector<int32_t> info(batch, 0);
  for (int64_t bt = 0; bt < batch && n > 0; ++bt) {
    // LAPACK's arrays: DL the n-1 sub-diagonal elements (JAX's dl[1:]), D,
    // DU the n-1 super-diagonal ones; B row i is x[i * nrhs ...].
    double* DL = dl.data() + bt * n + 1;
    double* D = d.data() + bt * n;
    double* DU = du.data() + bt * n;
    double* B = x.data() + bt * n * nrhs;
    auto row = [&](int64_t i) { return B + i * nrhs; };
    int32_t& status = info[bt];
    // Elimination: row i + 1 loses its sub-diagonal element, by row i or
    // (when the sub-diagonal element is larger) with rows i and i + 1
    // swapped, which fills DL[i] with U's second super-diagonal.
    for (int64_t i = 0; i + 1 < n && status == 0; ++i) {
      const bool last = i + 2 == n;
      if (std::abs(D[i]) >= std::abs(DL[i])) {
        if (D[i] == 0.0) {
          status = static_cast<int32_t>(i + 1);
          break;
        }
        const double fact = DL[i] / D[i];
        D[i + 1] -= fact * DU[i];
        for (int64_t r = 0; r < nrhs; ++r) row(i + 1)[r] -= fact * row(i)[r];
        if (!last) DL[i] = 0.0;
      } else {
        const double fact = D[i] / DL[i];
        D[i] = DL[i];
        const double below = D[i + 1];
        D[i + 1] = DU[i] - fact * below;
        if (!last) {
          DL[i] = DU[i + 1];
          DU[i + 1] = -fact * DL[i];
        }
        DU[i] = below;
        for (int64_t r = 0; r < nrhs; ++r) {
          const double upper = row(i)[r];
          row(i)[r] = row(i + 1)[r];
          row(i + 1)[r] = upper - fact * row(i + 1)[r];
        }
      }
    }
    if (status == 0 && D[n - 1] == 0.0) status = static_cast<int32_t>(n);
    if (status != 0) continue;
    // Back substitution through U (diagonal D, super-diagonals DU and DL).
    for (int64_t r = 0; r < nrhs; ++r) {
      for (int64_t i = n - 1; i >= 0; --i) {
        double v = row(i)[r];
        if (i + 1 < n) v -= DU[i] * row(i + 1)[r];
        if (i + 2 < n) v -= DL[i] * row(i + 2)[r];
        row(i)[r] = v / D[i];
      }
    }
  }
  if (solution_only) return ValuePtr(FromVector(shape, x));
  return MakeTuple(shape,
                   {FromVector(shape.tuple_shapes(0), dl), FromVector(shape.tuple_shapes(1), d),
                    FromVector(shape.tuple_shapes(2), du), FromVector(shape.tuple_shapes(3), x),
                    Int32s(shape.tuple_shapes(4), info)});
}

// geev on a real a[..., n, n]: (wr, wi, vl, vr complex[..., n, n], info).
// Eigenvalues in Eigen's order (a conjugate pair positive imaginary part
// first, as LAPACK; the order of the rest is, in both, an accident of the QR
// iteration); right eigenvectors of unit norm with their largest component
// real and positive. Left eigenvectors are not computed here (the caller
// leaves such a call opaque): vl is zeros.
absl::StatusOr<ValuePtr> Geev(const Instruction& instruction, Operands operands, bool right) {
  const Value& a = *operands[0];
  const Shape& shape = instruction.shape();
  const PrimitiveType type = a.shape.element_type();
  const PrimitiveType complex_type =
      type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128;
  const auto [batch_dims, m, n, k, batch] = MatricesOf(a.shape);
  if (a.shape.rank() < 2 || m != n || !shape.IsTuple() || shape.tuple_shapes_size() != 5 ||
      !Is(shape.tuple_shapes(0), type, Append(batch_dims, {n})) ||
      !Is(shape.tuple_shapes(1), type, Append(batch_dims, {n})) ||
      !Is(shape.tuple_shapes(2), complex_type, DimsOf(a.shape)) ||
      !Is(shape.tuple_shapes(3), complex_type, DimsOf(a.shape)) ||
      !Is(shape.tuple_shapes(4), PrimitiveType::kS32, batch_dims)) {
    return BadShapes(instruction, operands,
                     "a[..., n, n] -> (wr[..., n], wi[..., n], vl and vr complex[..., n, n], "
                     "s32[...])");
  }
  const std::vector<double> av = ToDoubles(a);
  std::vector<double> wr(batch * n), wi(batch * n);
  std::vector<std::complex<double>> vl(batch * n * n), vr(batch * n * n);
  std::vector<int32_t> info(batch, 0);
  Eigen::MatrixXd x(n, n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) x(i, j) = av[b * n * n + i * n + j];
    }
    Eigen::EigenSolver<Eigen::MatrixXd> solver;
    if (x.allFinite()) solver.compute(x, right);
    if (!x.allFinite() || solver.info() != Eigen::Success) {
      info[b] = 1;
      std::fill(wr.begin() + b * n, wr.begin() + (b + 1) * n, std::nan(""));
      std::fill(wi.begin() + b * n, wi.begin() + (b + 1) * n, std::nan(""));
      continue;
    }
    for (int64_t i = 0; i < n; ++i) {
      wr[b * n + i] = solver.eigenvalues()(i).real();
      wi[b * n + i] = solver.eigenvalues()(i).imag();
    }
    if (!right) continue;
    const Eigen::MatrixXcd vectors = solver.eigenvectors();
    for (int64_t c = 0; c < n; ++c) {
      Eigen::VectorXcd v = vectors.col(c);
      Eigen::Index largest = 0;
      v.cwiseAbs().maxCoeff(&largest);
      const std::complex<double> pivot = v(largest);
      if (std::abs(pivot) > 0) v *= std::abs(pivot) / pivot;  // largest component real, >= 0
      if (v.norm() > 0) v /= v.norm();
      for (int64_t i = 0; i < n; ++i) vr[b * n * n + i * n + c] = v(i);
    }
  }
  return MakeTuple(shape,
                   {FromVector(shape.tuple_shapes(0), wr), FromVector(shape.tuple_shapes(1), wi),
                    FromVector(shape.tuple_shapes(2), vl), FromVector(shape.tuple_shapes(3), vr),
                    Int32s(shape.tuple_shapes(4), info)});
}

bool IsF32OrF64Array(const Value& v) {
  return v.shape.IsArray() && IsF32OrF64(v.shape.element_type());
}

// The type letter of an older target: 's' or 'd' after `prefix`, else 0.
char TypeLetter(std::string_view target, std::string_view prefix, std::string_view name) {
  if (target.size() != prefix.size() + 1 + name.size() || !target.starts_with(prefix) ||
      !target.ends_with(name)) {
    return 0;
  }
  const char letter = target[prefix.size()];
  return letter == 's' || letter == 'd' ? letter : 0;
}

}  // namespace

std::optional<LegacyLapackCall> LegacyLapackAsFfi(const Instruction& instruction,
                                                  Operands operands) {
  const std::string& t = instruction.attrs().custom_call_target;
  struct Kind {
    std::string_view prefix, name;
    int scalars;  // leading s32 operands
    int results;  // today's results among the older call's
  };
  static constexpr Kind kKinds[] = {
      {"lapack_", "getrf", 3, 3}, {"blas_", "trsm", 7, 1},    {"lapack_", "gesdd", 6, 5},
      {"lapack_", "syevd", 3, 3}, {"lapack_", "geqrf", 4, 2}, {"lapack_", "orgqr", 5, 1},
  };
  const Kind* kind = nullptr;
  char letter = 0;
  for (const Kind& k : kKinds) {
    if ((letter = TypeLetter(t, k.prefix, k.name)) != 0) {
      kind = &k;
      break;
    }
  }
  if (kind == nullptr || static_cast<int>(operands.size()) <= kind->scalars) return std::nullopt;
  std::vector<int64_t> scalar(kind->scalars);
  for (int i = 0; i < kind->scalars; ++i) {
    const Value& v = *operands[i];
    if (!v.shape.IsArray() || v.shape.element_type() != PrimitiveType::kS32 ||
        v.element_count() != 1) {
      return std::nullopt;
    }
    scalar[i] = v.as<int32_t>()[0];
  }
  const Shape& shape = instruction.shape();
  const bool tuple = shape.IsTuple();
  if ((kind->results > 1 || tuple) && (!tuple || shape.tuple_shapes_size() < kind->results)) {
    return std::nullopt;
  }
  Shape call_shape = shape;
  if (tuple && kind->results == 1) {
    call_shape = shape.tuple_shapes(0);
  } else if (tuple) {
    std::vector<Shape> kept(shape.tuple_shapes().begin(),
                            shape.tuple_shapes().begin() + kind->results);
    call_shape = Shape::Tuple(std::move(kept));
  }
  LegacyLapackCall legacy;
  legacy.results = kind->results;
  legacy.call = std::make_unique<Instruction>(Opcode::kCustomCall, call_shape, instruction.name());
  InstructionAttributes& attrs = legacy.call->mutable_attrs();
  attrs.custom_call_target = absl::StrCat(std::string(kind->prefix), std::string(1, letter),
                                          std::string(kind->name), "_ffi");
  legacy.operands.assign(operands.begin() + kind->scalars, operands.end());
  auto ui8 = [](int64_t c) { return absl::StrCat(c, " : ui8"); };
  if (kind->name == "trsm") {
    // (alpha, a, b) -> blas_?trsm_ffi's (a, b, alpha).
    if (legacy.operands.size() != 3) return std::nullopt;
    std::rotate(legacy.operands.begin(), legacy.operands.begin() + 1, legacy.operands.end());
    const char trans = scalar[2] == 0 ? 'N' : scalar[2] == 1 ? 'T' : 'C';
    attrs.SetRaw("backend_config", absl::StrCat("{diag = ", ui8(scalar[3] != 0 ? 'U' : 'N'),
                                                ", side = ", ui8(scalar[0] != 0 ? 'L' : 'R'),
                                                ", trans_x = ", ui8(trans),
                                                ", uplo = ", ui8(scalar[1] != 0 ? 'L' : 'U'), "}"));
  } else if (kind->name == "gesdd") {
    const char mode = scalar[1] == 0 ? 'N' : scalar[0] != 0 ? 'A' : 'S';
    attrs.SetRaw("backend_config", absl::StrCat("{mode = ", ui8(mode), "}"));
  } else if (kind->name == "syevd") {
    attrs.SetRaw("backend_config", absl::StrCat("{mode = ", ui8('V'),
                                                ", uplo = ", ui8(scalar[0] != 0 ? 'L' : 'U'), "}"));
  }
  return legacy;
}

std::optional<absl::StatusOr<ValuePtr>> EvalLapackCustomCall(const Instruction& instruction,
                                                             Operands operands) {
  const std::string& t = instruction.attrs().custom_call_target;
  if (t == "lapack_sgetrf_ffi" || t == "lapack_dgetrf_ffi" || t == "cusolver_getrf_ffi" ||
      t == "hipsolver_getrf_ffi") {
    if (operands.size() != 1 || !IsF32OrF64Array(*operands[0])) return std::nullopt;
    return Getrf(instruction, operands);
  }
  if (t == "LuDecomposition") {  // XLA's, on TPUs
    if (operands.size() != 1 || !IsF32OrF64Array(*operands[0])) return std::nullopt;
    return Getrf(instruction, operands, /*tpu=*/true);
  }
  if (t == "cu_lu_pivots_to_permutation" || t == "hip_lu_pivots_to_permutation") {
    if (operands.size() != 1) return std::nullopt;
    return PivotsToPermutation(instruction, operands);
  }
  if (t == "lapack_sgesdd_ffi" || t == "lapack_dgesdd_ffi" || t == "lapack_sgesvd_ffi" ||
      t == "lapack_dgesvd_ffi") {
    const std::optional<int64_t> mode = FfiAttribute(instruction, "mode");
    if (operands.size() != 1 || !IsF32OrF64Array(*operands[0]) || !mode ||
        (*mode != 'A' && *mode != 'S' && *mode != 'N')) {
      return std::nullopt;
    }
    return Svd(instruction, operands, *mode);
  }
  if (t == "cusolver_gesvdj_ffi" || t == "hipsolver_gesvdj_ffi") {
    const std::optional<int64_t> compute_uv = FfiAttribute(instruction, "compute_uv");
    const std::optional<int64_t> full = FfiAttribute(instruction, "full_matrices");
    if (operands.size() != 1 || !IsF32OrF64Array(*operands[0]) || !compute_uv || !full) {
      return std::nullopt;
    }
    return Svd(instruction, operands,
               *compute_uv == 0 ? 'N'
               : *full != 0     ? 'A'
                                : 'S',
               /*gives_v=*/true);
  }
  if (t == "lapack_sgeev_ffi" || t == "lapack_dgeev_ffi") {
    const std::optional<int64_t> left = FfiAttribute(instruction, "compute_left");
    const std::optional<int64_t> right = FfiAttribute(instruction, "compute_right");
    // Left eigenvectors are not computed here: such a call stays opaque.
    if (operands.size() != 1 || !IsF32OrF64Array(*operands[0]) || left != 'N' || !right ||
        (*right != 'N' && *right != 'V')) {
      return std::nullopt;
    }
    return Geev(instruction, operands, *right == 'V');
  }
  if (t == "lapack_sgtsv_ffi" || t == "lapack_dgtsv_ffi") {
    if (operands.size() != 4 || !IsF32OrF64Array(*operands[3])) return std::nullopt;
    return Gtsv(instruction, operands);
  }
  if (t == "cusparse_gtsv2_ffi" || t == "hipsparse_gtsv2_ffi") {
    if (operands.size() != 4 || !IsF32OrF64Array(*operands[3])) return std::nullopt;
    return Gtsv(instruction, operands, /*solution_only=*/true);
  }
  return std::nullopt;
}

}  // namespace hlogym::eval
