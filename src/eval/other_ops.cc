// fft, custom-call, topk, cholesky,
// triangular-solve and the batch-norm ops. These compute in double (complex
// double for fft) and round once to the result type.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <numbers>
#include <numeric>
#include <optional>
#include <string_view>

#include "Eigen/Cholesky"
#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/eigh_custom_call.h"
#include "eval/interpreter.h"
#include "eval/lapack_custom_calls.h"
#include "eval/prng.h"
#include "eval/qr_custom_calls.h"
#include "eval/scalar_ops.h"
#include "hlo/backend_configs.h"

namespace hlogym::eval {
namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }
absl::Status Unsupported(const std::string& what) { return absl::UnimplementedError(what); }

bool HasCppType(PrimitiveType type) {
  return DispatchType(type, [](auto) {});
}

std::vector<std::complex<double>> ToComplex(const Value& v) {
  std::vector<std::complex<double>> out(v.element_count());
  DispatchType(v.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = v.as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = ConvertElement<std::complex<double>>(src[i]);
  });
  return out;
}

// --- fft --------------------------------------------------------------------

// In-place DFT along the dimension with `stride` and length `n` for every
// line of `data` (of `total` elements); inverse includes the 1/n factor.
void DftAlongDim(std::vector<std::complex<double>>& data, int64_t n, int64_t stride, bool inverse) {
  if (n <= 1) return;
  const int64_t total = data.size();
  std::vector<std::complex<double>> twiddle(n), line(n), out(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    twiddle[k] = std::polar(1.0, sign * 2.0 * std::numbers::pi * k / n);
  }
  for (int64_t base = 0; base < total; ++base) {
    if ((base / stride) % n != 0) continue;  // not the first element of a line
    for (int64_t i = 0; i < n; ++i) line[i] = data[base + i * stride];
    for (int64_t k = 0; k < n; ++k) {
      std::complex<double> acc = 0;
      for (int64_t t = 0; t < n; ++t) acc += line[t] * twiddle[(k * t) % n];
      out[k] = inverse ? acc / static_cast<double>(n) : acc;
    }
    for (int64_t i = 0; i < n; ++i) data[base + i * stride] = out[i];
  }
}

absl::StatusOr<ValuePtr> EvalFft(const Instruction& instruction, Operands operands) {
  const auto& attrs = instruction.attrs();
  const Shape& shape = instruction.shape();
  const Value& in = *operands[0];
  const int64_t k = attrs.fft_length.size();
  const int64_t rank = in.shape.rank();
  if (k < 1 || k > 3 || k > rank || shape.rank() != rank) return Invalid("fft rank");
  if (!HasCppType(in.shape.element_type()) || !HasCppType(shape.element_type())) {
    return Unsupported("fft element type");
  }
  // Work on the full complex array of the logical (time-domain) dims.
  std::vector<int64_t> full_dims = in.shape.dimensions();
  for (int64_t i = 0; i < k; ++i) full_dims[rank - k + i] = attrs.fft_length[i];
  const auto full_strides = RowMajorStrides(full_dims);
  const int64_t full_count =
      std::accumulate(full_dims.begin(), full_dims.end(), int64_t{1}, std::multiplies<int64_t>());
  std::vector<std::complex<double>> data(full_count);
  const auto in_data = ToComplex(in);
  const auto in_strides = RowMajorStrides(in.shape.dimensions());
  const int64_t last = rank - 1;
  auto for_each_index = [&](const std::vector<int64_t>& dims, auto&& fn) {
    const int64_t count =
        std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t c = 0; c < count; ++c) {
      fn(idx);
      for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
        if (++idx[d] < dims[d]) break;
        idx[d] = 0;
      }
    }
  };
  auto offset = [](const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
    return o;
  };
  switch (attrs.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
    case FftType::kRfft: {
      if (in.shape.dimensions() != full_dims) return Invalid("fft input dims vs fft_length");
      data = in_data;
      const bool inverse = attrs.fft_type == FftType::kIfft;
      for (int64_t d = rank - k; d < rank; ++d)
        DftAlongDim(data, full_dims[d], full_strides[d], inverse);
      if (attrs.fft_type != FftType::kRfft) {
        if (shape.dimensions() != full_dims) return Invalid("fft result dims");
        return ValuePtr(FromVector(shape, data));
      }
      std::vector<int64_t> out_dims = full_dims;
      out_dims[last] = full_dims[last] / 2 + 1;
      if (shape.dimensions() != out_dims) return Invalid("rfft result dims");
      std::vector<std::complex<double>> out(shape.ElementCount());
      const auto out_strides = RowMajorStrides(out_dims);
      for_each_index(out_dims, [&](const std::vector<int64_t>& idx) {
        out[offset(idx, out_strides)] = data[offset(idx, full_strides)];
      });
      return ValuePtr(FromVector(shape, out));
    }
    case FftType::kIrfft: {
      std::vector<int64_t> half_dims = full_dims;
      half_dims[last] = full_dims[last] / 2 + 1;
      if (in.shape.dimensions() != half_dims || shape.dimensions() != full_dims) {
        return Invalid("irfft dims");
      }
      // Inverse along the outer fft dims on the half spectrum, then the
      // complex-to-real inverse along the last dim.
      std::vector<std::complex<double>> half = in_data;
      const auto half_strides = RowMajorStrides(half_dims);
      for (int64_t d = rank - k; d < last; ++d)
        DftAlongDim(half, half_dims[d], half_strides[d], true);
      const int64_t n = full_dims[last], h = half_dims[last];
      std::vector<double> out(full_count);
      std::vector<int64_t> outer = half_dims;
      outer[last] = 1;
      for_each_index(outer, [&](const std::vector<int64_t>& idx) {
        const int64_t hb = offset(idx, half_strides), fb = offset(idx, full_strides);
        for (int64_t t = 0; t < n; ++t) {
          double acc = 0;
          for (int64_t f = 0; f < n; ++f) {
            std::complex<double> X = f < h ? half[hb + f] : std::conj(half[hb + (n - f)]);
            if (f == 0 || (n % 2 == 0 && f == n / 2)) X = X.real();
            acc += (X * std::polar(1.0, 2.0 * std::numbers::pi * ((f * t) % n) / n)).real();
          }
          out[fb + t] = acc / n;
        }
      });
      return ValuePtr(FromVector(shape, out));
    }
  }
  return Invalid("fft type");
}

// --- top-k -------------------------------------------------------------------

absl::StatusOr<ValuePtr> TopK(const Shape& shape, const Value& in, int64_t k, bool largest) {
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || in.shape.rank() < 1) {
    return Invalid("topk shapes");
  }
  const int64_t n = in.shape.dimensions(in.shape.rank() - 1);
  const int64_t rows = n == 0 ? 0 : in.element_count() / n;
  if (k < 0 || k > n || shape.tuple_shapes(0).ElementCount() != rows * k ||
      shape.tuple_shapes(1).ElementCount() != rows * k ||
      shape.tuple_shapes(0).element_type() != in.shape.element_type()) {
    return Invalid("topk k / result shape");
  }
  auto values = NewArray(shape.tuple_shapes(0));
  auto indices = NewArray(shape.tuple_shapes(1));
  bool ok = false;
  DispatchType(in.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsComplex<T>) {
      const T* src = in.as<T>();
      T* dst = values->mutable_as<T>();
      std::vector<int64_t> perm(n);
      for (int64_t r = 0; r < rows; ++r) {
        std::iota(perm.begin(), perm.end(), 0);
        const T* row = src + r * n;
        auto key = [&](int64_t i) {
          if constexpr (kIsFloat<T>)
            return TotalOrderKey(row[i]);
          else
            return row[i];
        };
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
          return largest ? key(a) > key(b) : key(a) < key(b);
        });
        for (int64_t j = 0; j < k; ++j) {
          dst[r * k + j] = row[perm[j]];
          DispatchType(shape.tuple_shapes(1).element_type(), [&](auto itag) {
            using I = typename decltype(itag)::type;
            indices->template mutable_as<I>()[r * k + j] = ConvertElement<I>(perm[j]);
          });
        }
      }
      ok = true;
    }
  });
  if (!ok) return Unsupported("topk element type");
  return MakeTuple(shape, {values, indices});
}

// --- custom-call --------------------------------------------------------------

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// op(A) X = B (left_side) or X op(A) = B for a batch of row-major matrices;
// `a` holds the batch's n x n matrices, of which only the `lower` (or upper)
// triangle is read (with a unit diagonal if `unit_diagonal`).
std::vector<double> SolveTriangular(const std::vector<double>& av, const std::vector<double>& bv,
                                    int64_t batch, int64_t n, int64_t rows, int64_t cols,
                                    bool left_side, bool lower, bool transpose,
                                    bool unit_diagonal) {
  std::vector<double> out(bv.size(), 0.0);
  for (int64_t t = 0; t < batch; ++t) {
    MatD A = Eigen::Map<const MatD>(av.data() + t * n * n, n, n);
    // Keep only the referenced triangle.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (lower ? j > i : j < i) A(i, j) = 0;
        if (i == j && unit_diagonal) A(i, j) = 1;
      }
    }
    if (transpose) A.transposeInPlace();
    const bool eff_lower = lower != transpose;
    MatD B = Eigen::Map<const MatD>(bv.data() + t * rows * cols, rows, cols);
    MatD X;
    if (left_side) {
      X = eff_lower ? MatD(A.triangularView<Eigen::Lower>().solve(B))
                    : MatD(A.triangularView<Eigen::Upper>().solve(B));
    } else {
      // X A = B  <=>  A^T X^T = B^T.
      MatD At = A.transpose();
      MatD Bt = B.transpose();
      MatD Xt = eff_lower ? MatD(At.triangularView<Eigen::Upper>().solve(Bt))
                          : MatD(At.triangularView<Eigen::Lower>().solve(Bt));
      X = Xt.transpose();
    }
    Eigen::Map<MatD>(out.data() + t * rows * cols, rows, cols) = X;
  }
  return out;
}

// Custom calls whose meaning is public (JAX's jaxlib kernels). Semantics
// were read from JAX's sources (jaxlib/lapack.py, jaxlib/cpu/lapack_kernels,
// jaxlib/gpu_solver / jax/_src/lax/linalg.py, jaxlib/gpu_prng.py):
//  - potrf (Cholesky): operand a[..., n, n], results (factor, info s32[...]).
//    The matrices are column-major in memory (JAX's operand layout), so
//    LAPACK's uplo names the logical triangle. Only that triangle is read and
//    overwritten with L (lower: a = L L^T) or U (upper: a = U^T U); the other
//    triangle keeps the input values (JAX applies tril afterwards). info is 0
//    on success, else k > 0 where the leading minor of order k is not
//    positive definite (the factor is then partial; JAX replaces it with NaN).
//    Targets: lapack_{s,d}potrf_ffi (attribute uplo = 'L' 76 / 'U' 85),
//    {cu,hip}solver_potrf_ffi (attribute lower = true/false), legacy
//    lapack_{s,d}potrf with operands (lower s32, batch s32, n s32, a).
//  - trsm: blas_{s,d}trsm_ffi with operands (a, b, alpha scalar), and
//    lapack_{s,d}trsm_ffi (JAX 0.5 on) with (a, b) and alpha 1; attributes
//    side ('L' 76 / 'R' 82), uplo, trans_x ('N' 78, 'T' 84, 'C' 67), diag
//    ('N' / 'U' 85); result x with op(a) x = alpha b (left) or
//    x op(a) = alpha b (right).
//  - ThreeFry2x32 on GPU: {cu,cuda,hip,rocm}_threefry2x32[_ffi] with operands
//    key0, key1, x0, x1 (u32, one shape) and results (out0, out1): element-
//    wise ThreeFry2x32-20 of counter (x0, x1) under key (key0, key1).
//  - Eigh (XLA/JAX symmetric eigendecomposition) and lapack_{s,d}syevd_ffi:
//    eigh_custom_call.cc.
//  - Qr / ProductOfElementaryHouseholderReflectors (geqrf / orgqr) and
//    lapack_{s,d}geqrf_ffi / lapack_{s,d}orgqr_ffi: qr_custom_calls.cc.
//  - the other LAPACK calls (getrf, gesdd/gesvd, geev, gtsv; the older
//    jaxlib's forms), cuSOLVER's and cuSPARSE's, and XLA's LuDecomposition:
//    lapack_custom_calls.h.
// Anything not recognised (other targets, complex types, other attribute
// values) returns nullopt and is treated as opaque; a recognised target
// with wrongly shaped operands is an error.

absl::StatusOr<ValuePtr> Potrf(const Instruction& instruction, const Value& a, bool lower) {
  const Shape& shape = instruction.shape();
  const std::string& target = instruction.attrs().custom_call_target;
  const int64_t rank = a.shape.rank();
  if (rank < 2 || a.shape.dimensions(rank - 1) != a.shape.dimensions(rank - 2)) {
    return Invalid(absl::StrCat(target, ": operand must be [..., n, n], got ", a.shape.ToString()));
  }
  std::vector<int64_t> batch_dims(a.shape.dimensions().begin(), a.shape.dimensions().end() - 2);
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 ||
      shape.tuple_shapes(0).dimensions() != a.shape.dimensions() ||
      shape.tuple_shapes(0).element_type() != a.shape.element_type() ||
      shape.tuple_shapes(1).element_type() != PrimitiveType::kS32 ||
      std::vector<int64_t>(shape.tuple_shapes(1).dimensions().begin(),
                           shape.tuple_shapes(1).dimensions().end()) != batch_dims) {
    return Invalid(absl::StrCat(target, ": result must be (", a.shape.ToString(false),
                                ", s32[batch dims]), got ", shape.ToString()));
  }
  const int64_t n = a.shape.dimensions(rank - 1);
  const int64_t batch = shape.tuple_shapes(1).ElementCount();
  std::vector<double> m = ToDoubles(a);
  std::vector<int32_t> info(batch, 0);
  for (int64_t b = 0; b < batch && n > 0; ++b) {
    double* A = m.data() + b * n * n;
    // (i, j) of the selected triangle, with i >= j: lower reads a[i][j],
    // upper the mirrored a[j][i] (its factor is U = L^T).
    auto at = [&](int64_t i, int64_t j) -> double& { return lower ? A[i * n + j] : A[j * n + i]; };
    for (int64_t j = 0; j < n; ++j) {
      double d = at(j, j);
      for (int64_t k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
      if (!(d > 0.0)) {  // not positive, or NaN: stop like LAPACK's potf2
        at(j, j) = d;
        info[b] = static_cast<int32_t>(j + 1);
        break;
      }
      const double ljj = std::sqrt(d);
      at(j, j) = ljj;
      for (int64_t i = j + 1; i < n; ++i) {
        double v = at(i, j);
        for (int64_t k = 0; k < j; ++k) v -= at(i, k) * at(j, k);
        at(i, j) = v / ljj;
      }
    }
  }
  auto info_value = NewArray(shape.tuple_shapes(1));
  std::copy(info.begin(), info.end(), info_value->mutable_as<int32_t>());
  return MakeTuple(shape, {FromVector(shape.tuple_shapes(0), m), info_value});
}

absl::StatusOr<ValuePtr> Trsm(const Instruction& instruction, Operands operands) {
  const std::string& target = instruction.attrs().custom_call_target;
  const Value& a = *operands[0];
  const Value& b = *operands[1];
  // blas_?trsm_ffi scales b by a third operand, alpha; lapack_?trsm_ffi
  // (JAX 0.5 on) has no alpha: 1.
  const ValuePtr alpha_value = operands.size() == 3 ? operands[2] : nullptr;
  const auto side = FfiAttribute(instruction, "side"), uplo = FfiAttribute(instruction, "uplo"),
             trans = FfiAttribute(instruction, "trans_x"), diag = FfiAttribute(instruction, "diag");
  const int64_t rank = b.shape.rank();
  const Shape& shape = instruction.shape();
  if (rank < 2 || a.shape.rank() != rank ||
      (alpha_value && (alpha_value->shape.rank() != 0 ||
                       alpha_value->shape.element_type() != b.shape.element_type())) ||
      a.shape.element_type() != b.shape.element_type() || !shape.IsArray() ||
      shape.dimensions() != b.shape.dimensions() ||
      shape.element_type() != b.shape.element_type() || !side || !uplo || !trans || !diag ||
      (*side != 'L' && *side != 'R') || (*uplo != 'L' && *uplo != 'U') ||
      (*trans != 'N' && *trans != 'T' && *trans != 'C') || (*diag != 'N' && *diag != 'U')) {
    return Invalid(absl::StrCat(target,
                                ": expects (a[..., k, k], b[..., m, n][, alpha scalar]) -> "
                                "b's shape and side/uplo/trans_x/diag attributes"));
  }
  const bool left = *side == 'L';
  const int64_t rows = b.shape.dimensions(rank - 2), cols = b.shape.dimensions(rank - 1);
  const int64_t n = left ? rows : cols;
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (a.shape.dimensions(d) != b.shape.dimensions(d))
      return Invalid(absl::StrCat(target, ": batch dims"));
  }
  if (a.shape.dimensions(rank - 1) != n || a.shape.dimensions(rank - 2) != n) {
    return Invalid(absl::StrCat(target, ": a must be [..., ", n, ", ", n, "]"));
  }
  const int64_t batch = rows * cols == 0 ? 0 : b.element_count() / (rows * cols);
  std::vector<double> bv = ToDoubles(b);
  const double s = alpha_value ? ToDoubles(*alpha_value)[0] : 1.0;
  for (double& v : bv) v *= s;
  return ValuePtr(FromVector(shape, SolveTriangular(ToDoubles(a), bv, batch, n, rows, cols, left,
                                                    *uplo == 'L', *trans != 'N', *diag == 'U')));
}

absl::StatusOr<ValuePtr> ThreeFry(const Instruction& instruction, Operands operands) {
  const std::string& target = instruction.attrs().custom_call_target;
  const Shape& shape = instruction.shape();
  bool ok = shape.IsTuple() && shape.tuple_shapes_size() == 2;
  for (int i = 0; ok && i < 4; ++i) {
    ok = operands[i]->shape.element_type() == PrimitiveType::kU32 &&
         operands[i]->shape.dimensions() == operands[0]->shape.dimensions();
  }
  for (int i = 0; ok && i < 2; ++i) {
    ok = shape.tuple_shapes(i).IsArray() &&
         shape.tuple_shapes(i).element_type() == PrimitiveType::kU32 &&
         shape.tuple_shapes(i).dimensions() == operands[0]->shape.dimensions();
  }
  if (!ok) {
    return Invalid(absl::StrCat(target,
                                ": expects four u32 operands (key0, key1, x0, x1) of one "
                                "shape and a result (u32[that], u32[that])"));
  }
  auto out0 = NewArray(shape.tuple_shapes(0)), out1 = NewArray(shape.tuple_shapes(1));
  const uint32_t* k0 = operands[0]->as<uint32_t>();
  const uint32_t* k1 = operands[1]->as<uint32_t>();
  const uint32_t* x0 = operands[2]->as<uint32_t>();
  const uint32_t* x1 = operands[3]->as<uint32_t>();
  uint32_t* o0 = out0->mutable_as<uint32_t>();
  uint32_t* o1 = out1->mutable_as<uint32_t>();
  for (int64_t i = 0; i < out0->element_count(); ++i) {
    const auto r = ThreeFry2x32({x0[i], x1[i]}, {k0[i], k1[i]});
    o0[i] = r[0];
    o1[i] = r[1];
  }
  return MakeTuple(shape, {out0, out1});
}

// nullopt: not a target computed here.
std::optional<absl::StatusOr<ValuePtr>> EvalKnownCustomCall(const Instruction& instruction,
                                                            Operands operands) {
  const std::string& t = instruction.attrs().custom_call_target;
  // Annotations that compute nothing on one device: sharding markers (one
  // partition) and memory-placement hints. Evaluated as opaque, they made the
  // random bits behind every jax.random call of a Flax or Keras model (whose
  // key passes through a Sharding call) differ from XLA's.
  if ((t == "Sharding" || t == "xla.sdy.FuncResultSharding" || t == "SPMDFullToShardShape" ||
       t == "SPMDShardToFullShape" || t == "annotate_device_placement" || t == "MoveToHost" ||
       t == "MoveToDevice" || t == "PinToDevice") &&
      operands.size() == 1 && operands[0]->shape.IsArray() &&
      operands[0]->shape.element_type() == instruction.shape().element_type() &&
      operands[0]->shape.dimensions() == instruction.shape().dimensions()) {
    return absl::StatusOr<ValuePtr>(operands[0]);
  }
  auto real_of = [&](size_t i) {
    return i < operands.size() && IsF32OrF64(operands[i]->shape.element_type());
  };
  if (t == "lapack_spotrf_ffi" || t == "lapack_dpotrf_ffi") {
    const auto uplo = FfiAttribute(instruction, "uplo");
    if (operands.size() != 1 || !real_of(0) || !uplo || (*uplo != 'L' && *uplo != 'U')) {
      return std::nullopt;
    }
    return Potrf(instruction, *operands[0], *uplo == 'L');
  }
  if (t == "cusolver_potrf_ffi" || t == "hipsolver_potrf_ffi") {
    const auto lower = FfiAttribute(instruction, "lower");
    if (operands.size() != 1 || !real_of(0) || !lower) return std::nullopt;
    return Potrf(instruction, *operands[0], *lower != 0);
  }
  if (t == "lapack_spotrf" || t == "lapack_dpotrf") {
    if (operands.size() != 4 || !real_of(3)) return std::nullopt;
    for (int i = 0; i < 3; ++i) {
      if (operands[i]->shape.element_type() != PrimitiveType::kS32 ||
          operands[i]->element_count() != 1) {
        return std::nullopt;
      }
    }
    const Value& a = *operands[3];
    const int64_t rank = a.shape.rank();
    if (rank >= 2) {
      const int64_t n = a.shape.dimensions(rank - 1);
      const int64_t batch = n == 0 ? 0 : a.element_count() / (n * n);
      if (operands[1]->as<int32_t>()[0] != batch || operands[2]->as<int32_t>()[0] != n) {
        return absl::StatusOr<ValuePtr>(
            Invalid(absl::StrCat(t, ": batch/n operands disagree with ", a.shape.ToString())));
      }
    }
    return Potrf(instruction, a, operands[0]->as<int32_t>()[0] != 0);
  }
  if (t == "blas_strsm_ffi" || t == "blas_dtrsm_ffi") {
    if (operands.size() != 3 || !real_of(1)) return std::nullopt;
    return Trsm(instruction, operands);
  }
  if (t == "lapack_strsm_ffi" || t == "lapack_dtrsm_ffi") {
    if (operands.size() != 2 || !real_of(1)) return std::nullopt;
    return Trsm(instruction, operands);
  }
  if (std::optional<LegacyLapackCall> legacy = LegacyLapackAsFfi(instruction, operands)) {
    std::optional<absl::StatusOr<ValuePtr>> today =
        EvalKnownCustomCall(*legacy->call, legacy->operands);
    if (!today || !today->ok()) return today;
    // The older call's extra results (workspaces, info) as zeros.
    const Shape& shape = instruction.shape();
    if (!shape.IsTuple()) return today;
    std::vector<ValuePtr> elements =
        legacy->results == 1 ? std::vector<ValuePtr>{**today} : (**today)->elements;
    for (int64_t i = elements.size(); i < shape.tuple_shapes_size(); ++i) {
      if (!shape.tuple_shapes(i).IsArray()) return std::nullopt;
      std::shared_ptr<Value> zeros = NewArray(shape.tuple_shapes(i));
      std::fill(zeros->bytes(), zeros->bytes() + zeros->size_bytes, uint8_t{0});
      elements.push_back(std::move(zeros));
    }
    return absl::StatusOr<ValuePtr>(MakeTuple(shape, std::move(elements)));
  }
  if (auto eigh = EvalEighCustomCall(instruction, operands)) return *std::move(eigh);
  if (auto qr = EvalQrCustomCall(instruction, operands)) return *std::move(qr);
  if (auto lapack = EvalLapackCustomCall(instruction, operands)) return *std::move(lapack);
  if (t == "cu_threefry2x32" || t == "cu_threefry2x32_ffi" || t == "cuda_threefry2x32" ||
      t == "cuda_threefry2x32_ffi" || t == "hip_threefry2x32" || t == "hip_threefry2x32_ffi" ||
      t == "rocm_threefry2x32") {
    if (operands.size() != 4) return std::nullopt;
    return ThreeFry(instruction, operands);
  }
  return std::nullopt;
}

void FillLeaves(const Shape& shape, uint64_t seed, std::vector<ValuePtr>& out_elements,
                ValuePtr& out) {
  if (shape.IsTuple()) {
    std::vector<ValuePtr> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      ValuePtr e;
      std::vector<ValuePtr> unused;
      FillLeaves(shape.tuple_shapes(i), Mix64(seed + i + 1), unused, e);
      elements.push_back(e);
    }
    out = MakeTuple(shape, std::move(elements));
    return;
  }
  if (shape.IsToken()) {
    out = MakeToken();
    return;
  }
  auto v = NewArray(shape);
  FillDeterministic(*v, seed, -1.0, 1.0, 0, 7);
  out = v;
}

absl::StatusOr<ValuePtr> EvalCustomCall(const Instruction& instruction, Operands operands) {
  const auto& attrs = instruction.attrs();
  const std::string& target = attrs.custom_call_target;
  if (target == "TopK" && operands.size() == 1) {
    const Shape& shape = instruction.shape();
    if (shape.IsTuple() && shape.tuple_shapes_size() == 2 && shape.tuple_shapes(0).rank() >= 1) {
      const Shape& v = shape.tuple_shapes(0);
      // XLA's TopK custom-call always selects the largest (its comparator is
      // a greater-than).
      const bool largest = true;
      return TopK(shape, *operands[0], v.dimensions(v.rank() - 1), largest);
    }
  }
  if (auto known = EvalKnownCustomCall(instruction, operands)) return *std::move(known);
  // Opaque: a deterministic function of the target, its attributes and the
  // operand values.
  uint64_t seed = HashBytes(target.data(), target.size(), 0xc0ffee);
  for (const RawAttribute& raw : attrs.raw) {
    if (raw.key == "metadata" || raw.key == "sharding" || raw.key == "frontend_attributes")
      continue;
    seed = HashBytes(raw.key.data(), raw.key.size(), seed);
    seed = HashBytes(raw.value.data(), raw.value.size(), seed);
  }
  for (const ValuePtr& v : operands) seed = HashValue(*v, seed);
  ValuePtr out;
  std::vector<ValuePtr> unused;
  FillLeaves(instruction.shape(), seed, unused, out);
  return out;
}

// --- linear algebra -------------------------------------------------------------

absl::StatusOr<ValuePtr> EvalCholesky(const Instruction& instruction, const Value& a) {
  const Shape& shape = instruction.shape();
  const int64_t rank = a.shape.rank();
  if (rank < 2 || a.shape.dimensions(rank - 1) != a.shape.dimensions(rank - 2) ||
      shape.dimensions() != a.shape.dimensions() || IsComplexType(shape.element_type()) ||
      !HasCppType(shape.element_type())) {
    return Invalid("cholesky shape/type");
  }
  const int64_t n = a.shape.dimensions(rank - 1);
  const int64_t batch = n == 0 ? 0 : a.element_count() / (n * n);
  std::vector<double> in = ToDoubles(a), out(in.size(), 0.0);
  const bool lower = instruction.attrs().lower;
  for (int64_t b = 0; b < batch; ++b) {
    MatD m(n, n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // Read only the selected triangle and mirror it.
        const bool take = lower ? i >= j : i <= j;
        m(i, j) = take ? in[b * n * n + i * n + j] : in[b * n * n + j * n + i];
      }
    }
    Eigen::LLT<MatD> llt(m);
    MatD l = llt.matrixL();
    const bool failed = llt.info() != Eigen::Success;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double v = lower ? (i >= j ? l(i, j) : 0.0) : (i <= j ? l(j, i) : 0.0);
        out[b * n * n + i * n + j] = failed ? std::nan("") : v;
      }
    }
  }
  return ValuePtr(FromVector(shape, out));
}

absl::StatusOr<ValuePtr> EvalTriangularSolve(const Instruction& instruction, const Value& a,
                                             const Value& b) {
  const auto& attrs = instruction.attrs();
  const Shape& shape = instruction.shape();
  const int64_t rank = a.shape.rank();
  if (rank < 2 || b.shape.rank() != rank || shape.dimensions() != b.shape.dimensions() ||
      IsComplexType(shape.element_type()) || !HasCppType(shape.element_type())) {
    return Unsupported("triangular-solve shape/type");
  }
  const int64_t n = a.shape.dimensions(rank - 1);
  if (a.shape.dimensions(rank - 2) != n) return Invalid("triangular-solve a is not square");
  const int64_t rows = b.shape.dimensions(rank - 2), cols = b.shape.dimensions(rank - 1);
  if ((attrs.left_side && rows != n) || (!attrs.left_side && cols != n)) {
    return Invalid("triangular-solve dims");
  }
  const int64_t batch = n == 0 || rows * cols == 0 ? 0 : b.element_count() / (rows * cols);
  const std::vector<double> out = SolveTriangular(
      ToDoubles(a), ToDoubles(b), batch, n, rows, cols, attrs.left_side, attrs.lower,
      attrs.transpose_a != TriangularSolveTranspose::kNoTranspose, attrs.unit_diagonal);
  return ValuePtr(FromVector(shape, out));
}

// --- batch norm ---------------------------------------------------------------

absl::StatusOr<ValuePtr> EvalBatchNorm(const Instruction& instruction, Operands operands) {
  const auto& attrs = instruction.attrs();
  const Value& x = *operands[0];
  const int64_t fi = attrs.feature_index;
  if (fi < 0 || fi >= x.shape.rank() || !HasCppType(x.shape.element_type()) ||
      IsComplexType(x.shape.element_type())) {
    return Invalid("batch-norm feature_index/type");
  }
  const int64_t C = x.shape.dimensions(fi);
  const int64_t stride = RowMajorStrides(x.shape.dimensions())[fi];
  const int64_t total = x.element_count();
  const int64_t per = C == 0 ? 0 : total / C;
  for (size_t i = 1; i < operands.size(); ++i) {
    if (i == 4 && instruction.opcode() == Opcode::kBatchNormGrad) continue;  // grad_output
    if (operands[i]->element_count() != C) return Invalid("batch-norm per-feature operand size");
  }
  const double eps = attrs.epsilon;
  const std::vector<double> xv = ToDoubles(x);
  auto feature = [&](int64_t i) { return (i / stride) % C; };
  const Shape& shape = instruction.shape();
  switch (instruction.opcode()) {
    case Opcode::kBatchNormInference: {
      if (operands.size() != 5) return Invalid("batch-norm-inference operands");
      auto scale = ToDoubles(*operands[1]), offset = ToDoubles(*operands[2]),
           mean = ToDoubles(*operands[3]), var = ToDoubles(*operands[4]);
      std::vector<double> y(total);
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = feature(i);
        y[i] = scale[c] * (xv[i] - mean[c]) / std::sqrt(var[c] + eps) + offset[c];
      }
      return ValuePtr(FromVector(shape, y));
    }
    case Opcode::kBatchNormTraining: {
      if (operands.size() != 3 || !shape.IsTuple() || shape.tuple_shapes_size() != 3) {
        return Invalid("batch-norm-training operands");
      }
      auto scale = ToDoubles(*operands[1]), offset = ToDoubles(*operands[2]);
      std::vector<double> mean(C, 0.0), var(C, 0.0), y(total);
      for (int64_t i = 0; i < total; ++i) mean[feature(i)] += xv[i];
      for (auto& m : mean) m /= std::max<int64_t>(per, 1);
      for (int64_t i = 0; i < total; ++i) {
        const double d = xv[i] - mean[feature(i)];
        var[feature(i)] += d * d;
      }
      for (auto& v : var) v /= std::max<int64_t>(per, 1);
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = feature(i);
        y[i] = scale[c] * (xv[i] - mean[c]) / std::sqrt(var[c] + eps) + offset[c];
      }
      return MakeTuple(
          shape, {FromVector(shape.tuple_shapes(0), y), FromVector(shape.tuple_shapes(1), mean),
                  FromVector(shape.tuple_shapes(2), var)});
    }
    case Opcode::kBatchNormGrad: {
      if (operands.size() != 5 || !shape.IsTuple() || shape.tuple_shapes_size() != 3 ||
          operands[4]->element_count() != total) {
        return Invalid("batch-norm-grad operands");
      }
      auto scale = ToDoubles(*operands[1]), mean = ToDoubles(*operands[2]),
           var = ToDoubles(*operands[3]), dy = ToDoubles(*operands[4]);
      std::vector<double> sum_dy(C, 0.0), sum_dy_xc(C, 0.0), dx(total);
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = feature(i);
        sum_dy[c] += dy[i];
        sum_dy_xc[c] += dy[i] * (xv[i] - mean[c]);
      }
      std::vector<double> dscale(C), doffset = sum_dy;
      for (int64_t c = 0; c < C; ++c) dscale[c] = sum_dy_xc[c] / std::sqrt(var[c] + eps);
      const double N = static_cast<double>(std::max<int64_t>(per, 1));
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = feature(i);
        const double inv = 1.0 / std::sqrt(var[c] + eps);
        dx[i] = scale[c] * inv *
                (dy[i] - sum_dy[c] / N - (xv[i] - mean[c]) * sum_dy_xc[c] / (N * (var[c] + eps)));
      }
      return MakeTuple(
          shape, {FromVector(shape.tuple_shapes(0), dx), FromVector(shape.tuple_shapes(1), dscale),
                  FromVector(shape.tuple_shapes(2), doffset)});
    }
    default:
      return Unsupported("batch-norm opcode");
  }
}

}  // namespace

absl::StatusOr<ValuePtr> EvalOther(Interpreter& interpreter, const Instruction& instruction,
                                   Operands operands) {
  for (const ValuePtr& v : operands) {
    if (!v->shape.IsArray()) return Invalid("operand is not an array");
  }
  switch (instruction.opcode()) {
    case Opcode::kFft:
      if (operands.size() != 1) return Invalid("fft operands");
      return EvalFft(instruction, operands);
    case Opcode::kCustomCall:
      if (instruction.attrs().custom_call_target == "GetRngSeed" && operands.empty()) {
        return EvalGetRngSeed(interpreter, instruction);
      }
      return EvalCustomCall(instruction, operands);
    case Opcode::kTopK:
      if (operands.size() != 1) return Invalid("topk operands");
      return TopK(instruction.shape(), *operands[0], instruction.attrs().k,
                  instruction.attrs().largest);
    case Opcode::kCholesky:
      if (operands.size() != 1) return Invalid("cholesky operands");
      return EvalCholesky(instruction, *operands[0]);
    case Opcode::kTriangularSolve:
      if (operands.size() != 2) return Invalid("triangular-solve operands");
      return EvalTriangularSolve(instruction, *operands[0], *operands[1]);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return EvalBatchNorm(instruction, operands);
    default:
      return Unsupported(absl::StrCat(OpName(instruction.opcode())));
  }
}

}  // namespace hlogym::eval
