// dot and convolution. Operands are first rearranged (and converted to the
// accumulation type: f32 for f16/bf16/f32, f64, complex, int64 for integers)
// into canonical layouts; dot then runs Eigen matrix products per batch, and
// convolution Eigen matrix products of input patches (im2col) with the kernel,
// from precomputed input-index tables. Big problems are split over
// EvaluatorOptions::num_threads threads.
#include <algorithm>
#include <thread>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/interpreter.h"
#include "eval/scalar_ops.h"
#include "hlo/shape_util.h"

namespace hlogym::eval {
namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Rearranges `v` so that new dimension i is old dimension perm[i] and
// converts to C.
template <typename C>
std::vector<C> Canonicalize(const Value& v, std::span<const int64_t> perm) {
  const int64_t n = v.element_count();
  const int width = ByteWidth(v.shape.element_type());
  const auto strides = RowMajorStrides(v.shape.dimensions());
  std::vector<int64_t> dims(perm.size()), src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = v.shape.dimensions(perm[i]);
    src_strides[i] = strides[perm[i]];
  }
  std::vector<uint8_t> raw(static_cast<size_t>(n) * width + 1);
  StridedCopy(width, dims, raw.data(), RowMajorStrides(dims), v.bytes(), src_strides);
  std::vector<C> out(n);
  DispatchType(v.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = reinterpret_cast<const T*>(raw.data());
    if constexpr (kIsComplex<T> && !kIsComplex<C>) {
      for (int64_t i = 0; i < n; ++i) out[i] = ConvertElement<C>(src[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = ConvertElement<C>(src[i]);
    }
  });
  return out;
}

// Runs fn(begin, end) over [0, n) split across up to `threads` threads when
// `work` (a flop estimate) is large enough to pay for a thread.
template <typename F>
void ParallelFor(int64_t n, int threads, double work, F&& fn) {
  if (threads <= 1 || n < 2 || work < 2e6) {
    fn(int64_t{0}, n);
    return;
  }
  threads = static_cast<int>(std::min<int64_t>(threads, n));
  std::vector<std::thread> pool;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(int64_t{0}, std::min(n, chunk));
  for (auto& t : pool) t.join();
}

// Writes canonical results (dims `canon_dims`, converted from C) into `out`
// whose dimension j is canonical dimension from_canon[j].
template <typename C>
void StoreResult(const std::vector<C>& canon, std::span<const int64_t> canon_dims,
                 std::span<const int64_t> from_canon, Value& out) {
  const int64_t n = out.element_count();
  std::vector<C> arranged;
  const std::vector<C>* src = &canon;
  if (!IsIdentityPermutation(from_canon)) {
    arranged.resize(n);
    const auto cstrides = RowMajorStrides(canon_dims);
    std::vector<int64_t> dims(from_canon.size()), src_strides(from_canon.size());
    for (size_t j = 0; j < from_canon.size(); ++j) {
      dims[j] = canon_dims[from_canon[j]];
      src_strides[j] = cstrides[from_canon[j]];
    }
    StridedCopy(sizeof(C), dims, reinterpret_cast<uint8_t*>(arranged.data()), RowMajorStrides(dims),
                reinterpret_cast<const uint8_t*>(canon.data()), src_strides);
    src = &arranged;
  }
  DispatchType(out.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.mutable_as<T>();
    for (int64_t i = 0; i < n; ++i) dst[i] = ConvertElement<T>((*src)[i]);
  });
}

// `out`'s elements as C, when C is how they are stored and its dimensions are
// the canonical ones in order (from_canon is the identity); else null.
template <typename C>
C* DirectResult(Value& out, std::span<const int64_t> from_canon) {
  if (!IsIdentityPermutation(from_canon)) return nullptr;
  C* direct = nullptr;
  DispatchType(out.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, C>) direct = out.mutable_as<C>();
  });
  return direct;
}

template <typename C>
absl::StatusOr<ValuePtr> DotTyped(const Instruction& instruction, const Value& lhs,
                                  const Value& rhs, int threads) {
  const DotDimensionNumbers& dn = *instruction.attrs().dot_dimension_numbers;
  const Shape& shape = instruction.shape();
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(a.begin(), a.end(), d) == a.end() &&
          std::find(b.begin(), b.end(), d) == b.end()) {
        out.push_back(d);
      }
    }
    return out;
  };
  const auto lfree =
      free_dims(lhs.shape.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const auto rfree =
      free_dims(rhs.shape.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size() ||
      dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) {
    return Invalid("dot dimension numbers");
  }
  auto check_dim = [](const Shape& s, int64_t d) { return d >= 0 && d < s.rank(); };
  int64_t B = 1, M = 1, K = 1, N = 1;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    const int64_t a = dn.lhs_batch_dimensions[i], b = dn.rhs_batch_dimensions[i];
    if (!check_dim(lhs.shape, a) || !check_dim(rhs.shape, b) ||
        lhs.shape.dimensions(a) != rhs.shape.dimensions(b)) {
      return Invalid("dot batch dimensions");
    }
    B *= lhs.shape.dimensions(a);
    out_dims.push_back(lhs.shape.dimensions(a));
  }
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
    const int64_t a = dn.lhs_contracting_dimensions[i], b = dn.rhs_contracting_dimensions[i];
    if (!check_dim(lhs.shape, a) || !check_dim(rhs.shape, b) ||
        lhs.shape.dimensions(a) != rhs.shape.dimensions(b)) {
      return Invalid("dot contracting dimensions");
    }
    K *= lhs.shape.dimensions(a);
  }
  for (int64_t d : lfree) {
    M *= lhs.shape.dimensions(d);
    out_dims.push_back(lhs.shape.dimensions(d));
  }
  for (int64_t d : rfree) {
    N *= rhs.shape.dimensions(d);
    out_dims.push_back(rhs.shape.dimensions(d));
  }
  if (out_dims != shape.dimensions()) return Invalid("dot result shape");
  std::vector<int64_t> lperm = dn.lhs_batch_dimensions;
  lperm.insert(lperm.end(), lfree.begin(), lfree.end());
  lperm.insert(lperm.end(), dn.lhs_contracting_dimensions.begin(),
               dn.lhs_contracting_dimensions.end());
  std::vector<int64_t> rperm = dn.rhs_batch_dimensions;
  rperm.insert(rperm.end(), dn.rhs_contracting_dimensions.begin(),
               dn.rhs_contracting_dimensions.end());
  rperm.insert(rperm.end(), rfree.begin(), rfree.end());
  const std::vector<C> a = Canonicalize<C>(lhs, lperm);
  const std::vector<C> b = Canonicalize<C>(rhs, rperm);
  std::vector<C> c(static_cast<size_t>(B * M * N));
  using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const double work = static_cast<double>(B) * M * N * K;
  auto run = [&](int64_t batch, int64_t m0, int64_t m1) {
    if (m1 <= m0) return;
    Eigen::Map<const Mat> A(a.data() + batch * M * K + m0 * K, m1 - m0, K);
    Eigen::Map<const Mat> Bm(b.data() + batch * K * N, K, N);
    Eigen::Map<Mat> Cm(c.data() + batch * M * N + m0 * N, m1 - m0, N);
    if (K == 0) {
      Cm.setZero();
    } else {
      Cm.noalias() = A * Bm;
    }
  };
  if (B >= 2) {
    ParallelFor(B, threads, work, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) run(i, 0, M);
    });
  } else if (B == 1) {
    ParallelFor(M, threads, work, [&](int64_t begin, int64_t end) { run(0, begin, end); });
  }
  auto out = NewArray(shape);
  std::vector<int64_t> identity(out_dims.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  StoreResult<C>(c, out_dims, identity, *out);
  return ValuePtr(out);
}

template <typename C>
absl::StatusOr<ValuePtr> ConvTyped(const Instruction& instruction, const Value& lhs,
                                   const Value& rhs, int threads) {
  const auto& attrs = instruction.attrs();
  const ConvolutionDimensionNumbers& dn = *attrs.convolution_dimension_numbers;
  const Shape& shape = instruction.shape();
  const int64_t nsp = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != nsp ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != nsp ||
      lhs.shape.rank() != nsp + 2 || rhs.shape.rank() != nsp + 2 || shape.rank() != nsp + 2) {
    return Invalid("convolution ranks");
  }
  std::vector<WindowDimension> window(nsp);
  if (attrs.window) {
    if (static_cast<int64_t>(attrs.window->dimensions.size()) != nsp)
      return Invalid("convolution window rank");
    window = attrs.window->dimensions;
  } else {
    for (int64_t i = 0; i < nsp; ++i)
      window[i].size = rhs.shape.dimensions(dn.kernel_spatial_dimensions[i]);
  }
  std::vector<int64_t> lperm = {dn.input_batch_dimension, dn.input_feature_dimension};
  lperm.insert(lperm.end(), dn.input_spatial_dimensions.begin(), dn.input_spatial_dimensions.end());
  std::vector<int64_t> kperm = {dn.kernel_output_feature_dimension,
                                dn.kernel_input_feature_dimension};
  kperm.insert(kperm.end(), dn.kernel_spatial_dimensions.begin(),
               dn.kernel_spatial_dimensions.end());
  std::vector<int64_t> operm = {dn.output_batch_dimension, dn.output_feature_dimension};
  operm.insert(operm.end(), dn.output_spatial_dimensions.begin(),
               dn.output_spatial_dimensions.end());
  for (int64_t d : lperm)
    if (d < 0 || d >= nsp + 2) return Invalid("convolution dimension numbers");
  for (int64_t d : kperm)
    if (d < 0 || d >= nsp + 2) return Invalid("convolution dimension numbers");
  for (int64_t d : operm)
    if (d < 0 || d >= nsp + 2) return Invalid("convolution dimension numbers");

  const int64_t B = lhs.shape.dimensions(lperm[0]);
  const int64_t Cin = lhs.shape.dimensions(lperm[1]);
  const int64_t O = rhs.shape.dimensions(kperm[0]);
  const int64_t I = rhs.shape.dimensions(kperm[1]);
  const int64_t G = attrs.feature_group_count, BG = attrs.batch_group_count;
  if (G < 1 || BG < 1 || Cin != I * G || O % G != 0 || O % BG != 0 || B % BG != 0) {
    return Invalid("convolution feature/batch group counts");
  }
  const int64_t Bo = B / BG;
  std::vector<int64_t> in_sp(nsp), k_sp(nsp), out_sp(nsp);
  for (int64_t i = 0; i < nsp; ++i) {
    in_sp[i] = lhs.shape.dimensions(lperm[2 + i]);
    k_sp[i] = rhs.shape.dimensions(kperm[2 + i]);
    if (window[i].size != k_sp[i] || window[i].stride < 1 || window[i].base_dilation < 1 ||
        window[i].window_dilation < 1) {
      return Invalid("convolution window");
    }
    out_sp[i] = shape.dimensions(operm[2 + i]);
    const int64_t padded = (in_sp[i] - 1) * window[i].base_dilation + 1 + window[i].padding_low +
                           window[i].padding_high;
    const int64_t dilated_k = (k_sp[i] - 1) * window[i].window_dilation + 1;
    const int64_t expected =
        in_sp[i] == 0 || padded < dilated_k ? 0 : (padded - dilated_k) / window[i].stride + 1;
    if (expected != out_sp[i]) return Invalid("convolution output spatial size");
  }
  if (shape.dimensions(operm[0]) != Bo || shape.dimensions(operm[1]) != O) {
    return Invalid("convolution output batch/feature size");
  }
  const std::vector<C> in = Canonicalize<C>(lhs, lperm);
  const std::vector<C> ker = Canonicalize<C>(rhs, kperm);

  // table[d][o * k + j]: input coordinate along spatial d for output o and
  // kernel tap j (window reversal applied to the tap), or -1.
  std::vector<std::vector<int64_t>> table(nsp);
  const auto in_strides_sp = RowMajorStrides(in_sp);
  for (int64_t d = 0; d < nsp; ++d) {
    const WindowDimension& w = window[d];
    table[d].assign(out_sp[d] * k_sp[d], -1);
    for (int64_t o = 0; o < out_sp[d]; ++o) {
      for (int64_t j = 0; j < k_sp[d]; ++j) {
        const int64_t tap = w.window_reversal ? k_sp[d] - 1 - j : j;
        const int64_t dilated = o * w.stride - w.padding_low + j * w.window_dilation;
        if (dilated < 0 || dilated % w.base_dilation != 0) continue;
        const int64_t x = dilated / w.base_dilation;
        if (x >= in_sp[d]) continue;
        (void)tap;
        table[d][o * k_sp[d] + j] = x * in_strides_sp[d];
      }
    }
  }
  int64_t in_spatial = 1, k_spatial = 1, out_spatial = 1;
  for (int64_t d = 0; d < nsp; ++d) {
    in_spatial *= in_sp[d];
    k_spatial *= k_sp[d];
    out_spatial *= out_sp[d];
  }
  const auto k_strides = RowMajorStrides(k_sp);
  // For each kernel tap (linear), its per-dimension index and the offset in
  // the kernel's spatial block (with reversal).
  std::vector<int64_t> tap_index(k_spatial * nsp), tap_offset(k_spatial);
  for (int64_t t = 0; t < k_spatial; ++t) {
    int64_t rem = t, off = 0;
    for (int64_t d = 0; d < nsp; ++d) {
      const int64_t j = rem / k_strides[d];
      rem %= k_strides[d];
      tap_index[t * nsp + d] = j;
      off += (window[d].window_reversal ? k_sp[d] - 1 - j : j) * k_strides[d];
    }
    tap_offset[t] = off;
  }
  const auto out_strides_sp = RowMajorStrides(out_sp);
  // The result in canonical order [batch, spatial..., output feature] (the
  // matrix products' rows are output positions, their columns features):
  // written straight into the output when that is its layout and element
  // type (an NHWC f32 convolution), else into a buffer rearranged at the end.
  auto out = NewArray(shape);
  std::vector<int64_t> canon_dims = {Bo};
  canon_dims.insert(canon_dims.end(), out_sp.begin(), out_sp.end());
  canon_dims.push_back(O);
  // Output dimension j is canonical dimension from_canon[j]: batch 0, spatial
  // 1..nsp, feature nsp + 1.
  std::vector<int64_t> from_canon(nsp + 2);
  from_canon[operm[0]] = 0;
  from_canon[operm[1]] = nsp + 1;
  for (int64_t d = 0; d < nsp; ++d) from_canon[operm[2 + d]] = 1 + d;
  std::vector<C> buffer;
  C* result = DirectResult<C>(*out, from_canon);
  if (result == nullptr) {
    buffer.resize(static_cast<size_t>(Bo * O * out_spatial));
    result = buffer.data();
  }
  const int64_t og = O / G, obg = O / BG;
  const double work = static_cast<double>(Bo) * O * out_spatial * I * k_spatial;
  // Input offsets of every kernel tap for output position p (-1: padding);
  // pos: room for nsp coordinates.
  auto tap_offsets = [&](int64_t p, int64_t* pos, int64_t* offsets) {
    for (int64_t d = 0; d < nsp; ++d) {
      pos[d] = p / out_strides_sp[d];
      p %= out_strides_sp[d];
    }
    for (int64_t t = 0; t < k_spatial; ++t) {
      int64_t off = 0;
      for (int64_t d = 0; d < nsp; ++d) {
        const int64_t x = table[d][pos[d] * k_sp[d] + tap_index[t * nsp + d]];
        if (x < 0) {
          off = -1;
          break;
        }
        off += x;
      }
      offsets[t] = off;
    }
  };
  if (BG == 1 && I * k_spatial > 0) {
    // As a matrix product per feature group (im2col): rows are the output
    // positions of every batch element, columns (input feature, tap) pairs.
    // Rows go in blocks of a fixed size, so the sums (and their rounding) do
    // not depend on the number of threads.
    using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const int64_t K = I * k_spatial;
    const int64_t rows = Bo * out_spatial;
    const int64_t block = std::max<int64_t>(1, std::min<int64_t>(rows, (int64_t{1} << 20) / K));
    const int64_t num_blocks = (rows + block - 1) / block;
    for (int64_t fg = 0; fg < G; ++fg) {
      Mat kernel(K, og);
      for (int64_t oo = 0; oo < og; ++oo) {
        for (int64_t i = 0; i < I; ++i) {
          const C* k_base = ker.data() + ((fg * og + oo) * I + i) * k_spatial;
          for (int64_t t = 0; t < k_spatial; ++t)
            kernel(i * k_spatial + t, oo) = k_base[tap_offset[t]];
        }
      }
      ParallelFor(num_blocks, threads, work / G, [&](int64_t begin, int64_t end) {
        Mat patches(block, K);
        std::vector<int64_t> pos(nsp), offsets(k_spatial);
        for (int64_t blk = begin; blk < end; ++blk) {
          const int64_t r0 = blk * block, n = std::min(block, rows - r0);
          for (int64_t r = 0; r < n; ++r) {
            const int64_t b = (r0 + r) / out_spatial, p = (r0 + r) % out_spatial;
            tap_offsets(p, pos.data(), offsets.data());
            C* row = patches.data() + r * K;
            for (int64_t i = 0; i < I; ++i) {
              const C* in_base = in.data() + (b * Cin + fg * I + i) * in_spatial;
              for (int64_t t = 0; t < k_spatial; ++t) {
                row[i * k_spatial + t] = offsets[t] >= 0 ? in_base[offsets[t]] : C(0);
              }
            }
          }
          // Rows r0.. of the result, this group's features.
          Eigen::Map<Mat, 0, Eigen::OuterStride<>> rows_out(result + r0 * O + fg * og, n, og,
                                                            Eigen::OuterStride<>(O));
          rows_out.noalias() = patches.topRows(n) * kernel;
        }
      });
    }
  } else {
    // Batch groups: one output feature at a time, a direct loop.
    ParallelFor(Bo * O, threads, work, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> pos(nsp), offsets(k_spatial);
      for (int64_t bo = begin; bo < end; ++bo) {
        const int64_t ob = bo / O, o = bo % O;
        const int64_t fg = o / og, bgi = o / obg;
        const int64_t ib = bgi * Bo + ob;
        for (int64_t p = 0; p < out_spatial; ++p) {
          tap_offsets(p, pos.data(), offsets.data());
          C acc = C(0);
          for (int64_t i = 0; i < I; ++i) {
            const C* in_base = in.data() + (ib * Cin + fg * I + i) * in_spatial;
            const C* k_base = ker.data() + (o * I + i) * k_spatial;
            for (int64_t t = 0; t < k_spatial; ++t) {
              if (offsets[t] >= 0) acc += in_base[offsets[t]] * k_base[tap_offset[t]];
            }
          }
          result[(ob * out_spatial + p) * O + o] = acc;
        }
      }
    });
  }
  if (!buffer.empty()) StoreResult<C>(buffer, canon_dims, from_canon, *out);
  return ValuePtr(out);
}

template <template <typename> class Fn>
absl::StatusOr<ValuePtr> ByAccumulationType(const Instruction& instruction, const Value& lhs,
                                            const Value& rhs, int threads) {
  switch (instruction.shape().element_type()) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
      return Fn<float>::Run(instruction, lhs, rhs, threads);
    case PrimitiveType::kF64:
      return Fn<double>::Run(instruction, lhs, rhs, threads);
    case PrimitiveType::kC64:
      return Fn<std::complex<float>>::Run(instruction, lhs, rhs, threads);
    case PrimitiveType::kC128:
      return Fn<std::complex<double>>::Run(instruction, lhs, rhs, threads);
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return Fn<int64_t>::Run(instruction, lhs, rhs, threads);
    default:
      return absl::UnimplementedError(absl::StrCat(OpName(instruction.opcode()),
                                                   " with result type ",
                                                   TypeName(instruction.shape().element_type())));
  }
}

template <typename C>
struct DotFn {
  static absl::StatusOr<ValuePtr> Run(const Instruction& i, const Value& l, const Value& r, int t) {
    return DotTyped<C>(i, l, r, t);
  }
};
template <typename C>
struct ConvFn {
  static absl::StatusOr<ValuePtr> Run(const Instruction& i, const Value& l, const Value& r, int t) {
    return ConvTyped<C>(i, l, r, t);
  }
};

bool Supported(const Value& v) {
  return v.shape.IsArray() && DispatchType(v.shape.element_type(), [](auto) {});
}

}  // namespace

absl::StatusOr<ValuePtr> EvalDot(const Instruction& instruction, Operands operands,
                                 int num_threads) {
  if (operands.size() != 2) return absl::UnimplementedError("dot with sparsity operands");
  if (!instruction.attrs().dot_dimension_numbers) return Invalid("dot without dimension numbers");
  if (!Supported(*operands[0]) || !Supported(*operands[1])) {
    return absl::UnimplementedError("dot operand element type");
  }
  return ByAccumulationType<DotFn>(instruction, *operands[0], *operands[1], num_threads);
}

absl::StatusOr<ValuePtr> EvalConvolution(const Instruction& instruction, Operands operands,
                                         int num_threads) {
  if (operands.size() != 2) return Invalid("convolution operands");
  if (!instruction.attrs().convolution_dimension_numbers) {
    return Invalid("convolution without dimension numbers");
  }
  if (!Supported(*operands[0]) || !Supported(*operands[1])) {
    return absl::UnimplementedError("convolution operand element type");
  }
  return ByAccumulationType<ConvFn>(instruction, *operands[0], *operands[1], num_threads);
}

}  // namespace hlogym::eval
