// Opcodes that apply a called scalar computation: reduce, reduce-window,
// select-and-scatter, scatter, sort, map. When the computation is a plain
// binary op (add, maximum, ...) the kernel runs a typed loop; otherwise it
// calls the computation per element through the interpreter.
#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/interpreter.h"
#include "eval/scalar_ops.h"
#include "hlo/scan_attributes.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {
namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Array shapes of the results (one array or the elements of a tuple).
std::vector<Shape> ResultShapes(const Shape& shape) {
  if (shape.IsTuple()) return shape.tuple_shapes();
  return {shape};
}

ValuePtr PackResults(const Shape& shape, std::vector<std::shared_ptr<Value>> outs) {
  if (!shape.IsTuple()) return outs[0];
  std::vector<ValuePtr> elements(outs.begin(), outs.end());
  return MakeTuple(shape, std::move(elements));
}

void CopyElement(const Value& src, int64_t si, Value& dst, int64_t di) {
  const int w = ByteWidth(src.shape.element_type());
  std::memcpy(dst.bytes() + di * w, src.bytes() + si * w, w);
}

// Calls `scalar` on args and writes its outputs into outs[k] at index i.
absl::Status CallAndStore(ScalarComputation& scalar, std::span<const ValuePtr> args,
                          std::span<const std::shared_ptr<Value>> outs, int64_t index) {
  HLOGYM_ASSIGN(results, scalar.Call(args));
  if (results.size() != outs.size()) return Invalid("computation returns the wrong arity");
  for (size_t k = 0; k < outs.size(); ++k) {
    const Value& r = *(results)[k];
    if (r.element_count() != 1 || r.shape.element_type() != outs[k]->shape.element_type()) {
      return Invalid("computation returns the wrong type");
    }
    CopyElement(r, 0, *outs[k], index);
  }
  return absl::OkStatus();
}

// --- reduce ----------------------------------------------------------------

// Folds `in` (row-major, `dims`) into `out` (strided; 0 for reduced
// dimensions) with f(out element, in element).
template <typename In, typename Acc, typename F>
void ReduceLoop(const In* in, Acc* out, std::span<const int64_t> dims,
                std::span<const int64_t> out_strides, F f) {
  const int64_t rank = dims.size();
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    out[0] = f(out[0], in[0]);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = dims[rank - 1];
  const int64_t os = out_strides[rank - 1];
  int64_t out_off = 0;
  while (true) {
    if (os == 0) {
      Acc acc = out[out_off];
      for (int64_t i = 0; i < inner; ++i) acc = f(acc, in[i]);
      out[out_off] = acc;
    } else {
      for (int64_t i = 0; i < inner; ++i) out[out_off + i * os] = f(out[out_off + i * os], in[i]);
    }
    in += inner;
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      out_off += out_strides[d];
      if (++index[d] < dims[d]) break;
      out_off -= out_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

absl::StatusOr<ValuePtr> EvalReduce(Interpreter& interp, const Instruction& instruction,
                                    Operands operands) {
  if (operands.size() % 2 != 0 || operands.empty()) return Invalid("reduce operand count");
  const int64_t n = operands.size() / 2;
  const Shape& in_shape = operands[0]->shape;
  const auto& dims = instruction.attrs().dimensions;
  const auto result_shapes = ResultShapes(instruction.shape());
  if (static_cast<int64_t>(result_shapes.size()) != n) return Invalid("reduce result arity");
  std::vector<bool> reduced(in_shape.rank(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= in_shape.rank()) return Invalid("reduce dimension");
    reduced[d] = true;
  }
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < in_shape.rank(); ++d) {
    if (!reduced[d]) out_dims.push_back(in_shape.dimensions(d));
  }
  for (int64_t k = 0; k < n; ++k) {
    const Value& in = *operands[k];
    const Value& init = *operands[n + k];
    if (!in.shape.IsArray() || in.shape.dimensions() != in_shape.dimensions() ||
        init.element_count() != 1 || !result_shapes[k].IsArray() ||
        result_shapes[k].dimensions() != out_dims ||
        result_shapes[k].element_type() != in.shape.element_type() ||
        init.shape.element_type() != in.shape.element_type()) {
      return Invalid("reduce operand/result shapes");
    }
  }
  // Output stride of each input dimension (0 for reduced ones).
  const auto ostr = RowMajorStrides(out_dims);
  std::vector<int64_t> out_strides(in_shape.rank(), 0);
  for (int64_t d = 0, j = 0; d < in_shape.rank(); ++d) {
    if (!reduced[d]) out_strides[d] = ostr[j++];
  }
  std::vector<std::shared_ptr<Value>> outs;
  for (int64_t k = 0; k < n; ++k) {
    outs.push_back(NewArray(result_shapes[k]));
    const int w = ByteWidth(result_shapes[k].element_type());
    for (int64_t i = 0; i < outs[k]->element_count(); ++i) {
      std::memcpy(outs[k]->bytes() + i * w, operands[n + k]->bytes(), w);
    }
  }
  ScalarComputation& scalar = interp.Scalar(*instruction.to_apply());
  if (n == 1 && scalar.binary_op()) {
    const Opcode op = *scalar.binary_op();
    bool ok = false;
    DispatchType(in_shape.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float>) {
        // HLO leaves the order of a reduction's additions to the backend, and
        // XLA's CPU backend sums in vectorized partial sums and trees
        // (tree_reduction_rewriter), whose error grows with log n, not n. A
        // sequential f32 sum drifts further from the exact sum than XLA does,
        // so f32 sums accumulate in f64, rounded once at the end. (bf16/f16
        // keep their own rounding: XLA's pipeline decides where they widen,
        // and the check compares them with low-precision tolerances.)
        if (op == Opcode::kAdd) {
          std::vector<double> wide(outs[0]->element_count());
          const float* init = operands[1]->as<float>();
          std::fill(wide.begin(), wide.end(), static_cast<double>(init[0]));
          ReduceLoop(operands[0]->as<float>(), wide.data(), in_shape.dimensions(), out_strides,
                     [](double a, float b) { return a + b; });
          float* out = outs[0]->mutable_as<float>();
          for (size_t i = 0; i < wide.size(); ++i) out[i] = static_cast<float>(wide[i]);
          ok = true;
          return;
        }
      }
      switch (op) {
#define HLOGYM_CASE(name)                                                                \
  case Opcode::name:                                                                     \
    if constexpr (BinaryApplies<T>(Opcode::name)) {                                      \
      ReduceLoop(operands[0]->as<T>(), outs[0]->mutable_as<T>(), in_shape.dimensions(),  \
                 out_strides, [](T a, T b) { return BinaryOp<T>(Opcode::name, a, b); }); \
      ok = true;                                                                         \
    }                                                                                    \
    break;
        // Kept as written: clang-format cannot tell these macro calls from statements.
        // clang-format off
        HLOGYM_CASE(kAdd) HLOGYM_CASE(kMultiply) HLOGYM_CASE(kMaximum) HLOGYM_CASE(kMinimum)
        HLOGYM_CASE(kAnd) HLOGYM_CASE(kOr) HLOGYM_CASE(kXor)
#undef HLOGYM_CASE
        default: break;
        // clang-format on
      }
    });
    if (ok) return PackResults(instruction.shape(), std::move(outs));
  }
  // Generic: the computation per element, in row-major input order.
  const int64_t count = operands[0]->element_count();
  const int64_t rank = in_shape.rank();
  std::vector<int64_t> index(rank, 0);
  std::vector<ValuePtr> args(2 * n);
  int64_t out_off = 0;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t k = 0; k < n; ++k) {
      args[k] = ScalarAt(*outs[k], out_off);
      args[n + k] = ScalarAt(*operands[k], i);
    }
    if (auto s = CallAndStore(scalar, args, outs, out_off); !s.ok()) return s;
    for (int64_t d = rank - 1; d >= 0; --d) {
      out_off += out_strides[d];
      if (++index[d] < in_shape.dimensions(d)) break;
      out_off -= out_strides[d] * in_shape.dimensions(d);
      index[d] = 0;
    }
  }
  return PackResults(instruction.shape(), std::move(outs));
}

// --- windows ------------------------------------------------------------------

struct WindowInfo {
  std::vector<WindowDimension> dims;
  std::vector<int64_t> out_dims;
};

absl::StatusOr<WindowInfo> ResolveWindow(const Instruction& instruction, const Shape& in_shape) {
  WindowInfo info;
  const int64_t rank = in_shape.rank();
  if (instruction.attrs().window) {
    info.dims = instruction.attrs().window->dimensions;
  }
  if (static_cast<int64_t>(info.dims.size()) != rank) return Invalid("window rank");
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = info.dims[d];
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return Invalid("window dimension");
    }
    const int64_t n = in_shape.dimensions(d);
    const int64_t padded =
        (n == 0 ? 0 : (n - 1) * w.base_dilation + 1) + w.padding_low + w.padding_high;
    const int64_t dilated = (w.size - 1) * w.window_dilation + 1;
    info.out_dims.push_back(padded < dilated ? 0 : (padded - dilated) / w.stride + 1);
  }
  return info;
}

// Calls fn(input_linear_index) for every in-bounds element of the window at
// output position `out_index`, in row-major window order.
template <typename F>
void ForEachInWindow(const WindowInfo& info, const Shape& in_shape,
                     std::span<const int64_t> in_strides, std::span<const int64_t> out_index,
                     std::vector<int64_t>& widx, F&& fn) {
  const int64_t rank = in_shape.rank();
  std::fill(widx.begin(), widx.end(), 0);
  while (true) {
    int64_t off = 0;
    bool valid = true;
    for (int64_t d = 0; d < rank && valid; ++d) {
      const WindowDimension& w = info.dims[d];
      const int64_t pos = out_index[d] * w.stride - w.padding_low + widx[d] * w.window_dilation;
      if (pos < 0 || pos % w.base_dilation != 0) {
        valid = false;
        break;
      }
      const int64_t x = pos / w.base_dilation;
      if (x >= in_shape.dimensions(d)) {
        valid = false;
        break;
      }
      off += x * in_strides[d];
    }
    if (valid) fn(off);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++widx[d] < info.dims[d].size) break;
      widx[d] = 0;
    }
    if (d < 0) return;
  }
}

absl::StatusOr<ValuePtr> EvalReduceWindow(Interpreter& interp, const Instruction& instruction,
                                          Operands operands) {
  if (operands.size() % 2 != 0 || operands.empty()) return Invalid("reduce-window operand count");
  const int64_t n = operands.size() / 2;
  const Shape& in_shape = operands[0]->shape;
  HLOGYM_ASSIGN(info, ResolveWindow(instruction, in_shape));
  const auto result_shapes = ResultShapes(instruction.shape());
  if (static_cast<int64_t>(result_shapes.size()) != n) return Invalid("reduce-window arity");
  for (int64_t k = 0; k < n; ++k) {
    if (operands[k]->shape.dimensions() != in_shape.dimensions() ||
        operands[n + k]->element_count() != 1 || result_shapes[k].dimensions() != info.out_dims ||
        result_shapes[k].element_type() != operands[k]->shape.element_type()) {
      return Invalid("reduce-window shapes");
    }
  }
  std::vector<std::shared_ptr<Value>> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(NewArray(result_shapes[k]));
  const auto in_strides = RowMajorStrides(in_shape.dimensions());
  const int64_t rank = in_shape.rank();
  const int64_t out_count = result_shapes[0].ElementCount();
  std::vector<int64_t> oidx(rank, 0), widx(rank, 0);
  ScalarComputation& scalar = interp.Scalar(*instruction.to_apply());
  auto advance = [&]() {
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++oidx[d] < info.out_dims[d]) return;
      oidx[d] = 0;
    }
  };
  if (n == 1 && scalar.binary_op()) {
    const Opcode op = *scalar.binary_op();
    bool ok = false;
    DispatchType(in_shape.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (!ApplyBinary(op, in_shape.element_type(), operands[1]->bytes(), operands[1]->bytes(),
                       outs[0]->bytes(), 0)) {
        return;  // op not valid for T
      }
      const T* in = operands[0]->as<T>();
      T* out = outs[0]->mutable_as<T>();
      const T init = operands[1]->as<T>()[0];
      for (int64_t o = 0; o < out_count; ++o) {
        T acc = init;
        ForEachInWindow(info, in_shape, in_strides, oidx, widx, [&](int64_t off) {
          ApplyBinary(op, in_shape.element_type(), reinterpret_cast<const uint8_t*>(&acc),
                      reinterpret_cast<const uint8_t*>(in + off), reinterpret_cast<uint8_t*>(&acc),
                      1);
        });
        out[o] = acc;
        advance();
      }
      ok = true;
    });
    if (ok) return PackResults(instruction.shape(), std::move(outs));
    std::fill(oidx.begin(), oidx.end(), 0);
  }
  std::vector<ValuePtr> args(2 * n);
  absl::Status status;
  for (int64_t o = 0; o < out_count && status.ok(); ++o) {
    for (int64_t k = 0; k < n; ++k) CopyElement(*operands[n + k], 0, *outs[k], o);
    ForEachInWindow(info, in_shape, in_strides, oidx, widx, [&](int64_t off) {
      if (!status.ok()) return;
      for (int64_t k = 0; k < n; ++k) {
        args[k] = ScalarAt(*outs[k], o);
        args[n + k] = ScalarAt(*operands[k], off);
      }
      status = CallAndStore(scalar, args, outs, o);
    });
    advance();
  }
  if (!status.ok()) return status;
  return PackResults(instruction.shape(), std::move(outs));
}

absl::StatusOr<ValuePtr> EvalSelectAndScatter(Interpreter& interp, const Instruction& instruction,
                                              Operands operands) {
  if (operands.size() != 3) return Invalid("select-and-scatter operands");
  const Value& operand = *operands[0];
  const Value& source = *operands[1];
  const Value& init = *operands[2];
  HLOGYM_ASSIGN(info, ResolveWindow(instruction, operand.shape));
  if (source.shape.dimensions() != info.out_dims || init.element_count() != 1 ||
      instruction.called_computations().size() != 2 ||
      instruction.shape().dimensions() != operand.shape.dimensions()) {
    return Invalid("select-and-scatter shapes");
  }
  auto out = NewArray(instruction.shape());
  for (int64_t i = 0; i < out->element_count(); ++i) CopyElement(init, 0, *out, i);
  ScalarComputation& select = interp.Scalar(*instruction.called_computations()[0]);
  ScalarComputation& scatter = interp.Scalar(*instruction.called_computations()[1]);
  const auto in_strides = RowMajorStrides(operand.shape.dimensions());
  const int64_t rank = operand.shape.rank();
  std::vector<int64_t> oidx(rank, 0), widx(rank, 0);
  absl::Status status;
  const int64_t count = source.element_count();
  std::vector<std::shared_ptr<Value>> outs = {out};
  for (int64_t s = 0; s < count && status.ok(); ++s) {
    int64_t selected = -1;
    ValuePtr selected_value;
    ForEachInWindow(info, operand.shape, in_strides, oidx, widx, [&](int64_t off) {
      if (!status.ok()) return;
      ValuePtr candidate = ScalarAt(operand, off);
      if (selected < 0) {
        selected = off;
        selected_value = candidate;
        return;
      }
      const ValuePtr args[2] = {selected_value, candidate};
      auto keep = select.Call(args);
      if (!keep.ok()) {
        status = keep.status();
        return;
      }
      if (keep->size() != 1 || (*keep)[0]->shape.element_type() != PrimitiveType::kPred) {
        status = Invalid("select computation must return pred");
        return;
      }
      if (!(*keep)[0]->as<bool>()[0]) {
        selected = off;
        selected_value = candidate;
      }
    });
    if (status.ok() && selected >= 0) {
      const ValuePtr args[2] = {ScalarAt(*out, selected), ScalarAt(source, s)};
      status = CallAndStore(scatter, args, outs, selected);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++oidx[d] < info.out_dims[d]) break;
      oidx[d] = 0;
    }
  }
  if (!status.ok()) return status;
  return ValuePtr(out);
}

// --- scatter ----------------------------------------------------------------

// Which dimensions of a scatter's indices, updates and operand play which
// part, checked against each other.
struct ScatterGeometry {
  int64_t index_len = 1;                     // operand dims each index vector names
  std::vector<int64_t> idx_batch_dims;       // indices' dims other than index_vector_dim
  std::vector<int64_t> upd_scatter_dims;     // updates' dims that follow the indices
  std::vector<int64_t> upd_window_dims;      // updates' dims within one window
  std::vector<int64_t> window_operand_dims;  // operand dims the window dims map to
  std::vector<int64_t> extent;  // window extent per operand dim (1: inserted, batching)
};

absl::StatusOr<ScatterGeometry> GetScatterGeometry(const ScatterDimensionNumbers& dn,
                                                   const Shape& in_shape, const Shape& idx_shape,
                                                   const Shape& upd_shape) {
  const int64_t rank = in_shape.rank();
  ScatterGeometry g;
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > idx_shape.rank()) return Invalid("scatter index_vector_dim");
  g.index_len = ivd == idx_shape.rank() ? 1 : idx_shape.dimensions(ivd);
  if (g.index_len != static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size())) {
    return Invalid("scatter_dims_to_operand_dims size");
  }
  for (int64_t d = 0; d < idx_shape.rank(); ++d) {
    if (d != ivd) g.idx_batch_dims.push_back(d);
  }
  std::vector<bool> is_window(upd_shape.rank(), false);
  for (int64_t d : dn.update_window_dims) {
    if (d < 0 || d >= upd_shape.rank()) return Invalid("update_window_dims");
    is_window[d] = true;
  }
  for (int64_t d = 0; d < upd_shape.rank(); ++d) {
    (is_window[d] ? g.upd_window_dims : g.upd_scatter_dims).push_back(d);
  }
  if (g.upd_scatter_dims.size() != g.idx_batch_dims.size()) return Invalid("scatter update rank");
  for (size_t i = 0; i < g.upd_scatter_dims.size(); ++i) {
    if (upd_shape.dimensions(g.upd_scatter_dims[i]) != idx_shape.dimensions(g.idx_batch_dims[i])) {
      return Invalid("scatter update dims vs indices");
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dn.inserted_window_dims.begin(), dn.inserted_window_dims.end(), d) ==
            dn.inserted_window_dims.end() &&
        std::find(dn.input_batching_dims.begin(), dn.input_batching_dims.end(), d) ==
            dn.input_batching_dims.end()) {
      g.window_operand_dims.push_back(d);
    }
  }
  if (g.window_operand_dims.size() != g.upd_window_dims.size())
    return Invalid("scatter window rank");
  for (int64_t d : dn.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= rank) return Invalid("scatter_dims_to_operand_dims");
  }
  if (dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return Invalid("scatter batching dims");
  }
  // Window extent along every operand dim (1 for inserted/batching dims).
  g.extent.assign(rank, 1);
  for (size_t i = 0; i < g.window_operand_dims.size(); ++i) {
    g.extent[g.window_operand_dims[i]] = upd_shape.dimensions(g.upd_window_dims[i]);
    if (g.extent[g.window_operand_dims[i]] > in_shape.dimensions(g.window_operand_dims[i])) {
      return Invalid("scatter window larger than operand");
    }
  }
  return g;
}

absl::StatusOr<ValuePtr> EvalScatter(Interpreter& interp, const Instruction& instruction,
                                     Operands operands) {
  if (operands.size() < 3 || operands.size() % 2 != 1) return Invalid("scatter operand count");
  const int64_t n = (operands.size() - 1) / 2;
  if (!instruction.attrs().scatter_dimension_numbers) return Invalid("scatter dimension numbers");
  const ScatterDimensionNumbers& dn = *instruction.attrs().scatter_dimension_numbers;
  const Shape& in_shape = operands[0]->shape;
  const Value& indices = *operands[n];
  const Shape& idx_shape = indices.shape;
  const Shape& upd_shape = operands[n + 1]->shape;
  const auto result_shapes = ResultShapes(instruction.shape());
  if (static_cast<int64_t>(result_shapes.size()) != n) return Invalid("scatter arity");
  for (int64_t k = 0; k < n; ++k) {
    if (operands[k]->shape.dimensions() != in_shape.dimensions() ||
        operands[n + 1 + k]->shape.dimensions() != upd_shape.dimensions() ||
        result_shapes[k].dimensions() != in_shape.dimensions() ||
        operands[n + 1 + k]->shape.element_type() != operands[k]->shape.element_type() ||
        result_shapes[k].element_type() != operands[k]->shape.element_type()) {
      return Invalid("scatter shapes");
    }
  }
  const int64_t rank = in_shape.rank();
  const int64_t ivd = dn.index_vector_dim;
  HLOGYM_ASSIGN(geometry, GetScatterGeometry(dn, in_shape, idx_shape, upd_shape));
  const auto& [index_len, idx_batch_dims, upd_scatter_dims, upd_window_dims, window_operand_dims,
               extent] = geometry;
  std::vector<int64_t> idx_values(indices.element_count());
  for (size_t i = 0; i < idx_values.size(); ++i) idx_values[i] = GetIndexElement(indices, i);

  std::vector<std::shared_ptr<Value>> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(OverwritableCopy(operands[k], result_shapes[k]));
  ScalarComputation& scalar = interp.Scalar(*instruction.to_apply());
  const PrimitiveType type = in_shape.element_type();
  const bool fast_binary = n == 1 && scalar.binary_op() &&
                           ApplyBinary(*scalar.binary_op(), type, nullptr, nullptr, nullptr, 0);
  const bool assign = n == 1 && scalar.returns_second();
  const int width = ByteWidth(type);

  const auto in_strides = RowMajorStrides(in_shape.dimensions());
  const auto upd_strides = RowMajorStrides(upd_shape.dimensions());
  const auto idx_strides = RowMajorStrides(idx_shape.dimensions());
  int64_t scatter_count = 1, window_count = 1;
  for (int64_t d : upd_scatter_dims) scatter_count *= upd_shape.dimensions(d);
  for (int64_t d : upd_window_dims) window_count *= upd_shape.dimensions(d);
  std::vector<int64_t> sidx(upd_scatter_dims.size(), 0), widx(upd_window_dims.size(), 0);
  std::vector<int64_t> start(rank);
  std::vector<ValuePtr> args(2 * n);
  // Where the window's last dimension is contiguous in both the operand and the updates, a copy
  // or a binary combiner takes its whole row at once rather than one element a call.
  int64_t row = 1;
  if ((assign || fast_binary) && !upd_window_dims.empty() &&
      in_strides[window_operand_dims.back()] == 1 && upd_strides[upd_window_dims.back()] == 1) {
    row = upd_shape.dimensions(upd_window_dims.back());
  }
  for (int64_t s = 0; s < scatter_count; ++s) {
    int64_t idx_base = 0, upd_base = 0;
    for (size_t k = 0; k < sidx.size(); ++k) {
      idx_base += sidx[k] * idx_strides[idx_batch_dims[k]];
      upd_base += sidx[k] * upd_strides[upd_scatter_dims[k]];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < index_len; ++k) {
      const int64_t pos = idx_base + (ivd < idx_shape.rank() ? k * idx_strides[ivd] : 0);
      start[dn.scatter_dims_to_operand_dims[k]] = idx_values[pos];
    }
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      auto it = std::find(idx_batch_dims.begin(), idx_batch_dims.end(),
                          dn.scatter_indices_batching_dims[i]);
      if (it == idx_batch_dims.end()) return Invalid("scatter_indices_batching_dims");
      start[dn.input_batching_dims[i]] = sidx[it - idx_batch_dims.begin()];
    }
    bool in_bounds = true;
    int64_t in_base = 0;
    for (int64_t d = 0; d < rank && in_bounds; ++d) {
      // Compared without adding: an index near the type's maximum (the dynamic
      // padder points the indices past a size there) would overflow start + extent.
      if (start[d] < 0 || start[d] > in_shape.dimensions(d) - extent[d]) in_bounds = false;
      in_base += start[d] * in_strides[d];
    }
    if (in_bounds) {
      std::fill(widx.begin(), widx.end(), 0);
      for (int64_t w = 0; w < window_count; w += row) {
        int64_t in_off = in_base, upd_off = upd_base;
        for (size_t k = 0; k < widx.size(); ++k) {
          in_off += widx[k] * in_strides[window_operand_dims[k]];
          upd_off += widx[k] * upd_strides[upd_window_dims[k]];
        }
        if (assign) {
          std::memcpy(outs[0]->bytes() + in_off * width, operands[n + 1]->bytes() + upd_off * width,
                      row * width);
        } else if (fast_binary) {
          ApplyBinary(*scalar.binary_op(), type, outs[0]->bytes() + in_off * width,
                      operands[n + 1]->bytes() + upd_off * width, outs[0]->bytes() + in_off * width,
                      row);
        } else {
          for (int64_t k = 0; k < n; ++k) {
            args[k] = ScalarAt(*outs[k], in_off);
            args[n + k] = ScalarAt(*operands[n + 1 + k], upd_off);
          }
          if (auto st = CallAndStore(scalar, args, outs, in_off); !st.ok()) return st;
        }
        for (int64_t k = static_cast<int64_t>(widx.size()) - 1; k >= 0; --k) {
          widx[k] += k + 1 == static_cast<int64_t>(widx.size()) ? row : 1;
          if (widx[k] < upd_shape.dimensions(upd_window_dims[k])) break;
          widx[k] = 0;
        }
      }
    }
    for (int64_t k = static_cast<int64_t>(sidx.size()) - 1; k >= 0; --k) {
      if (++sidx[k] < upd_shape.dimensions(upd_scatter_dims[k])) break;
      sidx[k] = 0;
    }
  }
  return PackResults(instruction.shape(), std::move(outs));
}

// --- sort -------------------------------------------------------------------

absl::StatusOr<ValuePtr> EvalSort(Interpreter& interp, const Instruction& instruction,
                                  Operands operands) {
  if (operands.empty()) return Invalid("sort without operands");
  const Shape& shape0 = operands[0]->shape;
  const auto result_shapes = ResultShapes(instruction.shape());
  if (result_shapes.size() != operands.size()) return Invalid("sort arity");
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!operands[k]->shape.IsArray() || operands[k]->shape.dimensions() != shape0.dimensions() ||
        result_shapes[k].dimensions() != shape0.dimensions() ||
        result_shapes[k].element_type() != operands[k]->shape.element_type()) {
      return Invalid("sort shapes");
    }
  }
  if (instruction.attrs().dimensions.size() != 1) return Invalid("sort dimension");
  const int64_t dim = instruction.attrs().dimensions[0];
  if (dim < 0 || dim >= std::max<int64_t>(shape0.rank(), 1)) return Invalid("sort dimension");
  const int64_t len = shape0.rank() == 0 ? 1 : shape0.dimensions(dim);
  const int64_t stride = shape0.rank() == 0 ? 1 : RowMajorStrides(shape0.dimensions())[dim];
  const int64_t total = shape0.ElementCount();
  const int64_t rows = len == 0 ? 0 : total / len;
  ScalarComputation& comparator = interp.Scalar(*instruction.to_apply());
  if (comparator.num_parameters() != 2 * static_cast<int64_t>(operands.size())) {
    return Invalid("sort comparator arity");
  }
  std::vector<std::shared_ptr<Value>> outs;
  for (size_t k = 0; k < operands.size(); ++k) outs.push_back(NewArray(result_shapes[k]));
  std::vector<int64_t> perm(len);
  std::vector<ValuePtr> args(2 * operands.size());
  absl::Status status;
  const Instruction* simple = comparator.simple_compare();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = (r / stride) * stride * len + (r % stride);
    std::iota(perm.begin(), perm.end(), 0);
    bool fast = false;
    if (simple != nullptr) {
      const ComparisonDirection dir = simple->attrs().comparison_direction;
      const bool total_order = simple->attrs().comparison_type == ComparisonType::kTotalOrder;
      const bool swapped = simple->operand(0)->attrs().parameter_number == 1;
      const int64_t key = simple->operand(0)->attrs().parameter_number / 2;
      DispatchType(operands[key]->shape.element_type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* v = operands[key]->as<T>();
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
          const T x = v[base + a * stride], y = v[base + b * stride];
          return swapped ? CompareOp<T>(dir, total_order, y, x)
                         : CompareOp<T>(dir, total_order, x, y);
        });
        fast = true;
      });
    }
    if (!fast) {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        if (!status.ok()) return false;
        for (size_t k = 0; k < operands.size(); ++k) {
          args[2 * k] = ScalarAt(*operands[k], base + a * stride);
          args[2 * k + 1] = ScalarAt(*operands[k], base + b * stride);
        }
        auto result = comparator.Call(args);
        if (!result.ok()) {
          status = result.status();
          return false;
        }
        if (result->size() != 1 || (*result)[0]->shape.element_type() != PrimitiveType::kPred) {
          status = Invalid("sort comparator must return pred");
          return false;
        }
        return (*result)[0]->as<bool>()[0];
      });
      if (!status.ok()) return status;
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      for (int64_t i = 0; i < len; ++i) {
        CopyElement(*operands[k], base + perm[i] * stride, *outs[k], base + i * stride);
      }
    }
  }
  return PackResults(instruction.shape(), std::move(outs));
}

absl::StatusOr<ValuePtr> EvalMap(Interpreter& interp, const Instruction& instruction,
                                 Operands operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return Invalid("map result");
  const int64_t count = shape.ElementCount();
  for (const ValuePtr& v : operands) {
    if (!v->shape.IsArray() || v->element_count() != count) return Invalid("map operand shapes");
  }
  ScalarComputation& scalar = interp.Scalar(*instruction.to_apply());
  if (scalar.num_parameters() != static_cast<int64_t>(operands.size())) return Invalid("map arity");
  auto out = NewArray(shape);
  if (operands.size() == 2 && scalar.binary_op() &&
      operands[0]->shape.element_type() == shape.element_type() &&
      ApplyBinary(*scalar.binary_op(), shape.element_type(), operands[0]->bytes(),
                  operands[1]->bytes(), out->bytes(), count)) {
    return ValuePtr(out);
  }
  std::vector<std::shared_ptr<Value>> outs = {out};
  std::vector<ValuePtr> args(operands.size());
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < operands.size(); ++k) args[k] = ScalarAt(*operands[k], i);
    if (auto s = CallAndStore(scalar, args, outs, i); !s.ok()) return s;
  }
  return ValuePtr(out);
}

// --- scan ------------------------------------------------------------------

// Copies, for every index of the dimensions before `dim`, `inner` elements
// between position `at` of a [outer, length, inner] view of `big` and the
// [outer, inner] view of `small` (to_small: big -> small).
void CopyAlong(const Value& big, const Value& small, int64_t outer, int64_t length, int64_t inner,
               int64_t at, bool to_small) {
  const int w = ByteWidth(big.shape.element_type());
  for (int64_t o = 0; o < outer; ++o) {
    uint8_t* b = big.bytes() + ((o * length + at) * inner) * w;
    uint8_t* s = small.bytes() + (o * inner) * w;
    if (to_small) {
      std::memcpy(s, b, inner * w);
    } else {
      std::memcpy(b, s, inner * w);
    }
  }
}

absl::StatusOr<ValuePtr> EvalScan(Interpreter& interp, const Instruction& instruction,
                                  Operands operands) {
  HLOGYM_ASSIGN(attrs, ReadScanAttributes(instruction));
  const ScanAttributes& a = attrs;
  const Computation& body = *instruction.to_apply();
  const int64_t dim = a.scan_dimension;
  std::vector<ValuePtr> carries(operands.begin() + a.num_inputs, operands.end());
  std::vector<std::shared_ptr<Value>> outputs;
  for (int64_t k = 0; k < a.num_outputs; ++k) outputs.push_back(NewArray(a.result_shapes[k]));
  auto split = [&](const Shape& shape, int64_t* outer, int64_t* inner) {
    *outer = 1;
    *inner = 1;
    for (int64_t k = 0; k < shape.rank(); ++k) {
      if (k < dim) *outer *= shape.dimensions(k);
      if (k > dim) *inner *= shape.dimensions(k);
    }
  };
  for (int64_t step = 0; step < a.length; ++step) {
    const int64_t at = a.is_reverse ? a.length - 1 - step : step;
    std::vector<ValuePtr> args;
    for (int64_t i = 0; i < a.num_inputs; ++i) {
      const Value& input = *operands[i];
      auto slice = NewArray(body.parameter_instruction(i)->shape());
      int64_t outer, inner;
      split(input.shape, &outer, &inner);
      if (slice->size_bytes > 0) CopyAlong(input, *slice, outer, a.length, inner, at, true);
      args.push_back(slice);
    }
    args.insert(args.end(), carries.begin(), carries.end());
    HLOGYM_ASSIGN(result, interp.Run(body, args));
    std::vector<ValuePtr> values;
    if (result->shape.IsTuple()) {
      values = result->elements;
    } else {
      values = {result};
    }
    if (static_cast<int64_t>(values.size()) != a.num_outputs + a.num_carries) {
      return Invalid("scan to_apply returned the wrong number of values");
    }
    for (int64_t k = 0; k < a.num_outputs; ++k) {
      const Value& element = *values[k];
      if (!element.shape.IsArray() ||
          element.element_count() * a.length != outputs[k]->element_count()) {
        return Invalid("scan output element has the wrong size");
      }
      int64_t outer, inner;
      split(outputs[k]->shape, &outer, &inner);
      if (element.size_bytes > 0) {
        CopyAlong(*outputs[k], element, outer, a.length, inner, at, false);
      }
    }
    carries.assign(values.begin() + a.num_outputs, values.end());
  }
  std::vector<ValuePtr> results(outputs.begin(), outputs.end());
  results.insert(results.end(), carries.begin(), carries.end());
  if (!instruction.shape().IsTuple()) return results[0];
  return MakeTuple(instruction.shape(), std::move(results));
}

}  // namespace

absl::StatusOr<ValuePtr> EvalWithComputation(Interpreter& interpreter,
                                             const Instruction& instruction, Operands operands) {
  if (instruction.called_computations().empty()) return Invalid("missing called computation");
  for (const ValuePtr& v : operands) {
    if (!v->shape.IsArray()) return Invalid("operand is not an array");
  }
  switch (instruction.opcode()) {
    case Opcode::kReduce:
      return EvalReduce(interpreter, instruction, operands);
    case Opcode::kReduceWindow:
      return EvalReduceWindow(interpreter, instruction, operands);
    case Opcode::kSelectAndScatter:
      return EvalSelectAndScatter(interpreter, instruction, operands);
    case Opcode::kScatter:
      return EvalScatter(interpreter, instruction, operands);
    case Opcode::kSort:
      return EvalSort(interpreter, instruction, operands);
    case Opcode::kMap:
      return EvalMap(interpreter, instruction, operands);
    case Opcode::kScan:
      return EvalScan(interpreter, instruction, operands);
    default:
      return absl::UnimplementedError(std::string(OpName(instruction.opcode())));
  }
}

}  // namespace hlogym::eval
