// rng, rng-bit-generator, fft, custom-call, topk, cholesky,
// triangular-solve and the batch-norm ops. These compute in double (complex
// double for fft) and round once to the result type.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "Eigen/Cholesky"
#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/interpreter.h"
#include "eval/scalar_ops.h"

namespace hlogym::eval {
namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }
absl::Status Unsupported(const std::string& what) { return absl::UnimplementedError(what); }

bool HasCppType(PrimitiveType type) {
  return DispatchType(type, [](auto) {});
}

std::vector<double> ToDoubles(const Value& v) {
  std::vector<double> out(v.element_count());
  DispatchType(v.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = v.as<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = ConvertElement<double>(src[i]);
  });
  return out;
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

template <typename S>
std::shared_ptr<Value> FromVector(const Shape& shape, const std::vector<S>& data) {
  auto out = NewArray(shape);
  DispatchType(shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out->mutable_as<T>();
    for (int64_t i = 0; i < out->element_count(); ++i) dst[i] = ConvertElement<T>(data[i]);
  });
  return out;
}

// --- random -----------------------------------------------------------------

// rng-bit-generator. Not XLA's Philox/ThreeFry bit streams: the output is a
// deterministic function of the state (splitmix64 of state words and
// position), and the new state is a mix of the old one. Documented in
// evaluator.h; equivalence across passes holds as long as the op is kept.
absl::StatusOr<ValuePtr> EvalRngBitGenerator(const Instruction& instruction, Operands operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2 || operands.size() != 1) {
    return Invalid("rng-bit-generator shape");
  }
  const Value& state = *operands[0];
  if (!Matches(state, shape.tuple_shapes(0))) return Invalid("rng-bit-generator state shape");
  uint64_t seed = HashBytes(state.bytes(), state.size_bytes,
                            static_cast<uint64_t>(instruction.attrs().rng_algorithm) + 0x5eed);
  auto new_state = NewArray(shape.tuple_shapes(0));
  for (int64_t i = 0; i < new_state->size_bytes; i += 8) {
    uint64_t w = Mix64(seed ^ (0xabcdef + i));
    std::memcpy(new_state->bytes() + i, &w, std::min<int64_t>(8, new_state->size_bytes - i));
  }
  auto bits = NewArray(shape.tuple_shapes(1));
  for (int64_t i = 0; i < bits->size_bytes; i += 8) {
    uint64_t w = Mix64(seed + static_cast<uint64_t>(i / 8) * 0x9e3779b97f4a7c15ULL);
    std::memcpy(bits->bytes() + i, &w, std::min<int64_t>(8, bits->size_bytes - i));
  }
  return MakeTuple(shape, {new_state, bits});
}

absl::StatusOr<ValuePtr> EvalRng(Interpreter& interp, const Instruction& instruction,
                                 Operands operands) {
  const Shape& shape = instruction.shape();
  if (operands.size() != 2 || !shape.IsArray()) return Invalid("rng operands");
  const double a = ToDoubles(*operands[0]).at(0), b = ToDoubles(*operands[1]).at(0);
  const bool normal = instruction.attrs().rng_distribution == RandomDistribution::kNormal;
  std::vector<double> data(shape.ElementCount());
  auto& gen = interp.rng();
  for (double& x : data) {
    if (normal) {
      x = std::normal_distribution<double>(a, b)(gen);
    } else if (IsFloatingPointType(shape.element_type())) {
      x = std::uniform_real_distribution<double>(a, b)(gen);
      if (x >= b) x = a;
    } else {
      const int64_t lo = static_cast<int64_t>(a), hi = static_cast<int64_t>(b);
      x = hi > lo ? static_cast<double>(std::uniform_int_distribution<int64_t>(lo, hi - 1)(gen)) : a;
    }
  }
  if (!HasCppType(shape.element_type())) return Unsupported("rng element type");
  return ValuePtr(FromVector(shape, data));
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
  const int64_t full_count = std::accumulate(full_dims.begin(), full_dims.end(), int64_t{1},
                                             std::multiplies<int64_t>());
  std::vector<std::complex<double>> data(full_count);
  const auto in_data = ToComplex(in);
  const auto in_strides = RowMajorStrides(in.shape.dimensions());
  const int64_t last = rank - 1;
  auto for_each_index = [&](const std::vector<int64_t>& dims, auto&& fn) {
    const int64_t count = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
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
      for (int64_t d = rank - k; d < rank; ++d) DftAlongDim(data, full_dims[d], full_strides[d], inverse);
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
      for (int64_t d = rank - k; d < last; ++d) DftAlongDim(half, half_dims[d], half_strides[d], true);
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
          if constexpr (kIsFloat<T>) return TotalOrderKey(row[i]);
          else return row[i];
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
  // Opaque: a deterministic function of the target, its attributes and the
  // operand values.
  uint64_t seed = HashBytes(target.data(), target.size(), 0xc0ffee);
  for (const RawAttribute& raw : attrs.raw) {
    if (raw.key == "metadata" || raw.key == "sharding" || raw.key == "frontend_attributes") continue;
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

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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
  std::vector<double> av = ToDoubles(a), bv = ToDoubles(b), out(bv.size(), 0.0);
  for (int64_t t = 0; t < batch; ++t) {
    MatD A = Eigen::Map<MatD>(av.data() + t * n * n, n, n);
    // Keep only the referenced triangle.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (attrs.lower ? j > i : j < i) A(i, j) = 0;
        if (i == j && attrs.unit_diagonal) A(i, j) = 1;
      }
    }
    if (attrs.transpose_a != TriangularSolveTranspose::kNoTranspose) A.transposeInPlace();
    const bool lower = attrs.lower != (attrs.transpose_a != TriangularSolveTranspose::kNoTranspose);
    MatD B = Eigen::Map<MatD>(bv.data() + t * rows * cols, rows, cols);
    MatD X;
    if (attrs.left_side) {
      X = lower ? MatD(A.triangularView<Eigen::Lower>().solve(B))
                : MatD(A.triangularView<Eigen::Upper>().solve(B));
    } else {
      // X A = B  <=>  A^T X^T = B^T.
      MatD At = A.transpose();
      MatD Bt = B.transpose();
      MatD Xt = lower ? MatD(At.triangularView<Eigen::Upper>().solve(Bt))
                      : MatD(At.triangularView<Eigen::Lower>().solve(Bt));
      X = Xt.transpose();
    }
    Eigen::Map<MatD>(out.data() + t * rows * cols, rows, cols) = X;
  }
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
      return MakeTuple(shape, {FromVector(shape.tuple_shapes(0), y),
                               FromVector(shape.tuple_shapes(1), mean),
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
      return MakeTuple(shape, {FromVector(shape.tuple_shapes(0), dx),
                               FromVector(shape.tuple_shapes(1), dscale),
                               FromVector(shape.tuple_shapes(2), doffset)});
    }
    default:
      return Unsupported("batch-norm opcode");
  }
}

}  // namespace

absl::StatusOr<ValuePtr> EvalRandom(Interpreter& interpreter, const Instruction& instruction,
                                    Operands operands) {
  switch (instruction.opcode()) {
    case Opcode::kRngBitGenerator:
      return EvalRngBitGenerator(instruction, operands);
    case Opcode::kRng:
      return EvalRng(interpreter, instruction, operands);
    default:
      return Unsupported(absl::StrCat(OpName(instruction.opcode())));
  }
}

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
      return EvalCustomCall(instruction, operands);
    case Opcode::kTopK:
      if (operands.size() != 1) return Invalid("topk operands");
      return TopK(instruction.shape(), *operands[0], instruction.attrs().k, instruction.attrs().largest);
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
