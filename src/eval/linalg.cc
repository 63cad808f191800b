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
#include "hlo/status_macros.h"

namespace hlogym::eval {
namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Rearranges `v` so that new dimension i is old dimension perm[i] and
// converts to C.
template <typename C>
ArrayVector<C> Canonicalize(const Value& v, std::span<const int64_t> perm) {
  const int64_t n = v.element_count();
  const int width = ByteWidth(v.shape.element_type());
  const auto strides = RowMajorStrides(v.shape.dimensions());
  std::vector<int64_t> dims(perm.size()), src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = v.shape.dimensions(perm[i]);
    src_strides[i] = strides[perm[i]];
  }
  ArrayVector<uint8_t> raw(static_cast<size_t>(n) * width + 1);
  StridedCopy(width, dims, raw.data(), RowMajorStrides(dims), v.bytes(), src_strides);
  ArrayVector<C> out(n);
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
void StoreResult(const ArrayVector<C>& canon, std::span<const int64_t> canon_dims,
                 std::span<const int64_t> from_canon, Value& out) {
  const int64_t n = out.element_count();
  ArrayVector<C> arranged;
  const ArrayVector<C>* src = &canon;
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
  const ArrayVector<C> a = Canonicalize<C>(lhs, lperm);
  const ArrayVector<C> b = Canonicalize<C>(rhs, rperm);
  ArrayVector<C> c(static_cast<size_t>(B * M * N));
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

// A convolution's sizes in canonical order: input [batch, feature, spatial...],
// kernel [output feature, input feature, spatial...], output [batch, feature,
// spatial...]; the perms map canonical to the operands' own dimensions.
struct ConvGeometry {
  int64_t nsp = 0;  // spatial dimensions
  std::vector<WindowDimension> window;
  std::vector<int64_t> lperm, kperm, operm;
  int64_t B = 0, Cin = 0, O = 0, I = 0, G = 1, BG = 1, Bo = 0;
  std::vector<int64_t> in_sp, k_sp, out_sp;
  int64_t in_spatial = 1, k_spatial = 1, out_spatial = 1;
};

// The geometry of `instruction` on operands `lhs` and `rhs`, checked against
// its result shape.
absl::StatusOr<ConvGeometry> ResolveConvolution(const Instruction& instruction, const Value& lhs,
                                                const Value& rhs) {
  const auto& attrs = instruction.attrs();
  const ConvolutionDimensionNumbers& dn = *attrs.convolution_dimension_numbers;
  const Shape& shape = instruction.shape();
  ConvGeometry g;
  const int64_t nsp = g.nsp = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != nsp ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != nsp ||
      lhs.shape.rank() != nsp + 2 || rhs.shape.rank() != nsp + 2 || shape.rank() != nsp + 2) {
    return Invalid("convolution ranks");
  }
  g.window.resize(nsp);
  if (attrs.window) {
    if (static_cast<int64_t>(attrs.window->dimensions.size()) != nsp)
      return Invalid("convolution window rank");
    g.window = attrs.window->dimensions;
  } else {
    for (int64_t i = 0; i < nsp; ++i)
      g.window[i].size = rhs.shape.dimensions(dn.kernel_spatial_dimensions[i]);
  }
  g.lperm = {dn.input_batch_dimension, dn.input_feature_dimension};
  g.lperm.insert(g.lperm.end(), dn.input_spatial_dimensions.begin(),
                 dn.input_spatial_dimensions.end());
  g.kperm = {dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension};
  g.kperm.insert(g.kperm.end(), dn.kernel_spatial_dimensions.begin(),
                 dn.kernel_spatial_dimensions.end());
  g.operm = {dn.output_batch_dimension, dn.output_feature_dimension};
  g.operm.insert(g.operm.end(), dn.output_spatial_dimensions.begin(),
                 dn.output_spatial_dimensions.end());
  for (const std::vector<int64_t>* perm : {&g.lperm, &g.kperm, &g.operm}) {
    for (int64_t d : *perm) {
      if (d < 0 || d >= nsp + 2) return Invalid("convolution dimension numbers");
    }
  }
  g.B = lhs.shape.dimensions(g.lperm[0]);
  g.Cin = lhs.shape.dimensions(g.lperm[1]);
  g.O = rhs.shape.dimensions(g.kperm[0]);
  g.I = rhs.shape.dimensions(g.kperm[1]);
  g.G = attrs.feature_group_count;
  g.BG = attrs.batch_group_count;
  if (g.G < 1 || g.BG < 1 || g.Cin != g.I * g.G || g.O % g.G != 0 || g.O % g.BG != 0 ||
      g.B % g.BG != 0) {
    return Invalid("convolution feature/batch group counts");
  }
  g.Bo = g.B / g.BG;
  g.in_sp.resize(nsp);
  g.k_sp.resize(nsp);
  g.out_sp.resize(nsp);
  for (int64_t i = 0; i < nsp; ++i) {
    const WindowDimension& w = g.window[i];
    g.in_sp[i] = lhs.shape.dimensions(g.lperm[2 + i]);
    g.k_sp[i] = rhs.shape.dimensions(g.kperm[2 + i]);
    if (w.size != g.k_sp[i] || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Invalid("convolution window");
    }
    g.out_sp[i] = shape.dimensions(g.operm[2 + i]);
    const int64_t padded = (g.in_sp[i] - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
    const int64_t dilated_k = (g.k_sp[i] - 1) * w.window_dilation + 1;
    const int64_t expected =
        g.in_sp[i] == 0 || padded < dilated_k ? 0 : (padded - dilated_k) / w.stride + 1;
    if (expected != g.out_sp[i]) return Invalid("convolution output spatial size");
    g.in_spatial *= g.in_sp[i];
    g.k_spatial *= g.k_sp[i];
    g.out_spatial *= g.out_sp[i];
  }
  if (shape.dimensions(g.operm[0]) != g.Bo || shape.dimensions(g.operm[1]) != g.O) {
    return Invalid("convolution output batch/feature size");
  }
  return g;
}

// Where each kernel tap reads the input, for every output position.
class ConvTaps {
 public:
  explicit ConvTaps(const ConvGeometry& g)
      : g_(g), table_(g.nsp), tap_index_(g.k_spatial * g.nsp), tap_offset_(g.k_spatial) {
    const auto in_strides = RowMajorStrides(g.in_sp);
    for (int64_t d = 0; d < g.nsp; ++d) {
      const WindowDimension& w = g.window[d];
      table_[d].assign(g.out_sp[d] * g.k_sp[d], -1);
      for (int64_t o = 0; o < g.out_sp[d]; ++o) {
        for (int64_t j = 0; j < g.k_sp[d]; ++j) {
          const int64_t dilated = o * w.stride - w.padding_low + j * w.window_dilation;
          if (dilated < 0 || dilated % w.base_dilation != 0) continue;
          const int64_t x = dilated / w.base_dilation;
          if (x >= g.in_sp[d]) continue;
          table_[d][o * g.k_sp[d] + j] = x * in_strides[d];
        }
      }
    }
    const auto k_strides = RowMajorStrides(g.k_sp);
    for (int64_t t = 0; t < g.k_spatial; ++t) {
      int64_t rem = t, off = 0;
      for (int64_t d = 0; d < g.nsp; ++d) {
        const int64_t j = rem / k_strides[d];
        rem %= k_strides[d];
        tap_index_[t * g.nsp + d] = j;
        off += (g.window[d].window_reversal ? g.k_sp[d] - 1 - j : j) * k_strides[d];
      }
      tap_offset_[t] = off;
    }
    out_strides_ = RowMajorStrides(g.out_sp);
  }

  // The offset of kernel tap t in the kernel's spatial block (with reversal).
  int64_t kernel_offset(int64_t t) const { return tap_offset_[t]; }

  // Input offsets (in the input's spatial block) of every kernel tap for
  // output position p, -1 where the tap reads padding; pos: room for nsp
  // coordinates.
  void InputOffsets(int64_t p, int64_t* pos, int64_t* offsets) const {
    for (int64_t d = 0; d < g_.nsp; ++d) {
      pos[d] = p / out_strides_[d];
      p %= out_strides_[d];
    }
    for (int64_t t = 0; t < g_.k_spatial; ++t) {
      int64_t off = 0;
      for (int64_t d = 0; d < g_.nsp; ++d) {
        const int64_t x = table_[d][pos[d] * g_.k_sp[d] + tap_index_[t * g_.nsp + d]];
        if (x < 0) {
          off = -1;
          break;
        }
        off += x;
      }
      offsets[t] = off;
    }
  }

 private:
  const ConvGeometry& g_;
  // table_[d][o * k + j]: input offset along spatial d for output o and
  // kernel tap j, or -1.
  std::vector<std::vector<int64_t>> table_;
  std::vector<int64_t> tap_index_;   // per tap, its index along each spatial dimension
  std::vector<int64_t> tap_offset_;  // per tap, kernel_offset
  std::vector<int64_t> out_strides_;
};

// Without batch groups: a matrix product per feature group (im2col), rows the
// output positions of every batch element, columns (input feature, tap)
// pairs. Rows go in blocks of a fixed size, so the sums (and their rounding)
// do not depend on the number of threads. `result` is [batch, spatial...,
// output feature].
template <typename C>
void ConvByMatrixProducts(const ConvGeometry& g, const ConvTaps& taps, const ArrayVector<C>& in,
                          const ArrayVector<C>& ker, C* result, double work, int threads) {
  using Mat = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t og = g.O / g.G;
  const int64_t K = g.I * g.k_spatial;
  const int64_t rows = g.Bo * g.out_spatial;
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(rows, (int64_t{1} << 20) / K));
  const int64_t num_blocks = (rows + block - 1) / block;
  for (int64_t fg = 0; fg < g.G; ++fg) {
    Mat kernel(K, og);
    for (int64_t oo = 0; oo < og; ++oo) {
      for (int64_t i = 0; i < g.I; ++i) {
        const C* k_base = ker.data() + ((fg * og + oo) * g.I + i) * g.k_spatial;
        for (int64_t t = 0; t < g.k_spatial; ++t)
          kernel(i * g.k_spatial + t, oo) = k_base[taps.kernel_offset(t)];
      }
    }
    ParallelFor(num_blocks, threads, work / g.G, [&](int64_t begin, int64_t end) {
      Mat patches(block, K);
      std::vector<int64_t> pos(g.nsp), offsets(g.k_spatial);
      for (int64_t blk = begin; blk < end; ++blk) {
        const int64_t r0 = blk * block, n = std::min(block, rows - r0);
        for (int64_t r = 0; r < n; ++r) {
          const int64_t b = (r0 + r) / g.out_spatial, p = (r0 + r) % g.out_spatial;
          taps.InputOffsets(p, pos.data(), offsets.data());
          C* row = patches.data() + r * K;
          for (int64_t i = 0; i < g.I; ++i) {
            const C* in_base = in.data() + (b * g.Cin + fg * g.I + i) * g.in_spatial;
            for (int64_t t = 0; t < g.k_spatial; ++t) {
              row[i * g.k_spatial + t] = offsets[t] >= 0 ? in_base[offsets[t]] : C(0);
            }
          }
        }
        // Rows r0.. of the result, this group's features.
        Eigen::Map<Mat, 0, Eigen::OuterStride<>> rows_out(result + r0 * g.O + fg * og, n, og,
                                                          Eigen::OuterStride<>(g.O));
        rows_out.noalias() = patches.topRows(n) * kernel;
      }
    });
  }
}

// With batch groups: one output feature at a time, a direct loop.
template <typename C>
void ConvDirect(const ConvGeometry& g, const ConvTaps& taps, const ArrayVector<C>& in,
                const ArrayVector<C>& ker, C* result, double work, int threads) {
  const int64_t og = g.O / g.G, obg = g.O / g.BG;
  ParallelFor(g.Bo * g.O, threads, work, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> pos(g.nsp), offsets(g.k_spatial);
    for (int64_t bo = begin; bo < end; ++bo) {
      const int64_t ob = bo / g.O, o = bo % g.O;
      const int64_t fg = o / og, bgi = o / obg;
      const int64_t ib = bgi * g.Bo + ob;
      for (int64_t p = 0; p < g.out_spatial; ++p) {
        taps.InputOffsets(p, pos.data(), offsets.data());
        C acc = C(0);
        for (int64_t i = 0; i < g.I; ++i) {
          const C* in_base = in.data() + (ib * g.Cin + fg * g.I + i) * g.in_spatial;
          const C* k_base = ker.data() + (o * g.I + i) * g.k_spatial;
          for (int64_t t = 0; t < g.k_spatial; ++t) {
            if (offsets[t] >= 0) acc += in_base[offsets[t]] * k_base[taps.kernel_offset(t)];
          }
        }
        result[(ob * g.out_spatial + p) * g.O + o] = acc;
      }
    }
  });
}

template <typename C>
absl::StatusOr<ValuePtr> ConvTyped(const Instruction& instruction, const Value& lhs,
                                   const Value& rhs, int threads) {
  HLOGYM_ASSIGN(g, ResolveConvolution(instruction, lhs, rhs));
  const ArrayVector<C> in = Canonicalize<C>(lhs, g.lperm);
  const ArrayVector<C> ker = Canonicalize<C>(rhs, g.kperm);
  const ConvTaps taps(g);
  // The result in canonical order [batch, spatial..., output feature] (the
  // matrix products' rows are output positions, their columns features):
  // written straight into the output when that is its layout and element
  // type (an NHWC f32 convolution), else into a buffer rearranged at the end.
  auto out = NewArray(instruction.shape());
  std::vector<int64_t> canon_dims = {g.Bo};
  canon_dims.insert(canon_dims.end(), g.out_sp.begin(), g.out_sp.end());
  canon_dims.push_back(g.O);
  // Output dimension j is canonical dimension from_canon[j]: batch 0, spatial
  // 1..nsp, feature nsp + 1.
  std::vector<int64_t> from_canon(g.nsp + 2);
  from_canon[g.operm[0]] = 0;
  from_canon[g.operm[1]] = g.nsp + 1;
  for (int64_t d = 0; d < g.nsp; ++d) from_canon[g.operm[2 + d]] = 1 + d;
  ArrayVector<C> buffer;
  C* result = DirectResult<C>(*out, from_canon);
  if (result == nullptr) {
    buffer.resize(static_cast<size_t>(g.Bo * g.O * g.out_spatial));
    result = buffer.data();
  }
  const double work = static_cast<double>(g.Bo) * g.O * g.out_spatial * g.I * g.k_spatial;
  if (g.BG == 1 && g.I * g.k_spatial > 0) {
    ConvByMatrixProducts<C>(g, taps, in, ker, result, work, threads);
  } else {
    ConvDirect<C>(g, taps, in, ker, result, work, threads);
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

// `operand` in a type the typed kernels have: as it is, or, for a type they have no C++ type
// for (f8 and f4 formats, sub-byte integers), as f32 or s64 holding the same values, each exact
// there. Qwix's fp8 training multiplies f8e4m3fn operands into an f32 result.
absl::StatusOr<ValuePtr> InKernelType(const ValuePtr& operand) {
  if (Supported(*operand)) return operand;
  const PrimitiveType type = operand->shape.element_type();
  if (!operand->shape.IsArray() || !(IsFloatingPointType(type) || IsIntegralType(type))) {
    return absl::UnimplementedError(absl::StrCat("dot operand element type ", TypeName(type)));
  }
  const Literal narrow = ValueToLiteral(*operand);
  Shape shape = operand->shape;
  shape.set_element_type(IsFloatingPointType(type) ? PrimitiveType::kF32 : PrimitiveType::kS64);
  Literal wide(shape);
  for (int64_t i = 0; i < narrow.element_count(); ++i) {
    if (IsFloatingPointType(type)) {
      wide.SetFromDouble(i, narrow.GetAsDouble(i));
    } else {
      wide.SetFromInt64(i, narrow.GetAsInt64(i));
    }
  }
  return ValueFromLiteral(wide);
}

}  // namespace

absl::StatusOr<ValuePtr> EvalDot(const Instruction& instruction, Operands operands,
                                 int num_threads) {
  if (operands.size() != 2) return absl::UnimplementedError("dot with sparsity operands");
  if (!instruction.attrs().dot_dimension_numbers) return Invalid("dot without dimension numbers");
  HLOGYM_ASSIGN(lhs, InKernelType(operands[0]));
  HLOGYM_ASSIGN(rhs, InKernelType(operands[1]));
  return ByAccumulationType<DotFn>(instruction, *lhs, *rhs, num_threads);
}

absl::StatusOr<ValuePtr> EvalRaggedDot(const Instruction& instruction, Operands operands) {
  const auto& dot_dims = instruction.attrs().dot_dimension_numbers;
  const auto& ragged_dims = instruction.attrs().ragged_dot_dimension_numbers;
  if (operands.size() != 3 || !dot_dims || !ragged_dims ||
      ragged_dims->lhs_ragged_dimensions.size() != 1) {
    return Invalid("ragged-dot: (lhs, rhs, group_sizes) with one lhs ragged dimension");
  }
  const Value& lhs = *operands[0];
  const Value& rhs = *operands[1];
  const Value& sizes_value = *operands[2];
  if (!Supported(lhs) || !Supported(rhs) || !sizes_value.shape.IsArray()) {
    return absl::UnimplementedError("ragged-dot operand element type");
  }
  const int64_t ragged = ragged_dims->lhs_ragged_dimensions[0];
  const auto& lb = dot_dims->lhs_batch_dimensions;
  const auto& lc = dot_dims->lhs_contracting_dimensions;
  const auto& rb = dot_dims->rhs_batch_dimensions;
  const auto& rc = dot_dims->rhs_contracting_dimensions;
  auto contains = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  // Mode 1 (ragged non-contracting dimension: rows in group g use the rhs's
  // group g), mode 2 (ragged contracting dimension: group g sums its own
  // segment into output g) or mode 3 (ragged batch dimension: each batch
  // element is its own product, a dot whatever the group sizes, as JAX
  // computes it).
  const bool contracting = contains(lc, ragged);
  const bool batch_mode = contains(lb, ragged);
  const std::vector<int64_t>& rg = ragged_dims->rhs_group_dimensions;
  if (contracting || batch_mode ? !rg.empty() : rg.size() != 1) {
    return Invalid(
        "ragged-dot: a rhs group dimension exactly when the ragged dimension is not "
        "contracting");
  }
  std::vector<int64_t> lfree, rfree;
  for (int64_t d = 0; d < lhs.shape.rank(); ++d) {
    if (!contains(lb, d) && !contains(lc, d)) lfree.push_back(d);
  }
  for (int64_t d = 0; d < rhs.shape.rank(); ++d) {
    if (!contains(rb, d) && !contains(rc, d) && !contains(rg, d)) rfree.push_back(d);
  }
  auto extent = [](const Value& v, const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= v.shape.dimensions(d);
    return n;
  };
  const int64_t B = extent(lhs, lb), M = extent(lhs, lfree), K = extent(lhs, lc);
  const int64_t N = extent(rhs, rfree), G = rg.empty() ? 0 : rhs.shape.dimensions(rg[0]);
  // The dimensions whose index picks the group sizes: lhs batch dimensions,
  // then the lhs dimensions of the ragged one's kind outer to it; [g] alone is
  // the same for all.
  const std::vector<int64_t>& kind = contracting ? lc : lfree;
  std::vector<int64_t> outer;
  for (int64_t d : kind) {
    if (d < ragged) outer.push_back(d);
  }
  const int64_t groups = sizes_value.shape.rank() == 0
                             ? 0
                             : sizes_value.shape.dimensions(sizes_value.shape.rank() - 1);
  const bool broadcast = sizes_value.shape.rank() == 1;
  if (groups <= 0 || (!contracting && !batch_mode && groups != G) ||
      (!broadcast && !batch_mode &&
       sizes_value.shape.rank() != static_cast<int64_t>(lb.size() + outer.size()) + 1)) {
    return Invalid(absl::StrCat("ragged-dot: group_sizes ", sizes_value.shape.ToString(),
                                " does not fit its operands"));
  }
  std::vector<int64_t> lperm = lb, rperm;
  lperm.insert(lperm.end(), lfree.begin(), lfree.end());
  lperm.insert(lperm.end(), lc.begin(), lc.end());
  rperm = rg;
  rperm.insert(rperm.end(), rb.begin(), rb.end());
  rperm.insert(rperm.end(), rc.begin(), rc.end());
  rperm.insert(rperm.end(), rfree.begin(), rfree.end());
  const ArrayVector<double> L = Canonicalize<double>(lhs, lperm);
  const ArrayVector<double> R = Canonicalize<double>(rhs, rperm);
  const std::vector<double> sizes = ToDoubles(sizes_value);
  // Row-major coordinates of a flattened index over some of lhs's dimensions.
  auto coordinate = [&](int64_t flat, const std::vector<int64_t>& dims, int64_t which) {
    int64_t c = 0;
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      const int64_t size = lhs.shape.dimensions(dims[i]);
      c = flat % size;
      if (dims[i] == which) return c;
      flat /= size;
    }
    return c;
  };
  // The group of a position along the ragged dimension (-1: past them all).
  auto group_of = [&](int64_t b, int64_t flat_kind) {
    int64_t row = 0;
    if (!broadcast) {
      row = b;
      for (int64_t d : outer) row = row * lhs.shape.dimensions(d) + coordinate(flat_kind, kind, d);
    }
    const int64_t position = coordinate(flat_kind, kind, ragged);
    int64_t start = 0;
    for (int64_t g = 0; g < groups; ++g) {
      start += static_cast<int64_t>(sizes[row * groups + g]);
      if (position < start) return g;
    }
    return int64_t{-1};
  };
  std::vector<double> out((contracting ? groups : 1) * B * M * N, 0.0);
  std::vector<int64_t> k_group(contracting ? K : 0);  // a contraction's group of each k
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t k = 0; k < static_cast<int64_t>(k_group.size()); ++k) k_group[k] = group_of(b, k);
    for (int64_t m = 0; m < M; ++m) {
      const int64_t row_group = contracting || batch_mode ? 0 : group_of(b, m);
      if (row_group < 0) continue;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t g = contracting ? k_group[k] : row_group;
        if (g < 0) continue;
        const double l = L[(b * M + m) * K + k];
        const double* r = R.data() + ((rg.empty() ? b : g * B + b) * K + k) * N;
        double* o = out.data() + ((contracting ? g * B + b : b) * M + m) * N;
        for (int64_t n = 0; n < N; ++n) o[n] += l * r[n];
      }
    }
  }
  if (!instruction.shape().IsArray() ||
      instruction.shape().ElementCount() != static_cast<int64_t>(out.size())) {
    return Invalid(absl::StrCat("ragged-dot: result ", instruction.shape().ToString(),
                                " does not fit its operands"));
  }
  return ValuePtr(FromVector(instruction.shape(), out));
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
