// Kernels that move elements without computing on them. All of them are
// strided copies of untyped elements (see StridedCopy), so one code path
// serves every element type.
#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/interpreter.h"
#include "eval/scalar_ops.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"

namespace hlogym::eval {

int64_t GetIndexElement(const Value& array, int64_t index) {
  int64_t result = 0;
  DispatchType(array.shape.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt<T> || kIsPred<T>) {
      result = static_cast<int64_t>(array.as<T>()[index]);
    } else if constexpr (kIsFloat<T>) {
      result = ConvertElement<int64_t>(array.as<T>()[index]);
    }
  });
  return result;
}

ValuePtr ScalarAt(const Value& array, int64_t index) {
  auto out = NewArray(Shape::Scalar(array.shape.element_type()));
  const int width = ByteWidth(array.shape.element_type());
  std::memcpy(out->bytes(), array.bytes() + index * width, width);
  return out;
}

namespace {

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

absl::Status CheckArray(const Value& v) {
  if (!v.shape.IsArray()) {
    return Invalid(absl::StrCat("expected an array operand, got ", v.shape.ToString()));
  }
  return absl::OkStatus();
}

std::vector<int64_t> ToInt64(const Value& v) {
  std::vector<int64_t> out(v.element_count());
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) out[i] = GetIndexElement(v, i);
  return out;
}

// Fills `n` elements of width `width` at dst with the scalar at `value`.
void FillWith(uint8_t* dst, const uint8_t* value, int width, int64_t n) {
  if (n <= 0) return;
  std::memcpy(dst, value, width);
  int64_t done = 1;
  while (done < n) {
    const int64_t chunk = std::min(done, n - done);
    std::memcpy(dst + done * width, dst, chunk * width);
    done += chunk;
  }
}

// Physical (layout-ordered) copy of a logical array: the dims in
// major-to-minor physical order and the permutation from physical to
// logical dimensions.
// out[i...] = in[perm applied]: output dim i is input dim perm[i].
ValuePtr TransposeValue(const ValuePtr& in, std::span<const int64_t> perm, const Shape& out_shape) {
  if (IsIdentityPermutation(perm)) return ShareArray(in, out_shape);
  auto out = NewArray(out_shape);
  const auto in_strides = RowMajorStrides(in->shape.dimensions());
  std::vector<int64_t> dims(perm.size()), src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = in->shape.dimensions(perm[i]);
    src_strides[i] = in_strides[perm[i]];
  }
  StridedCopy(ByteWidth(out_shape.element_type()), dims, out->bytes(), RowMajorStrides(dims),
              in->bytes(), src_strides);
  return out;
}

absl::StatusOr<ValuePtr> EvalBitcast(const Instruction& instruction, const ValuePtr& in) {
  const Shape& out_shape = instruction.shape();
  if (!out_shape.IsArray() || !in->shape.IsArray()) {
    return Invalid("bitcast of a non-array");
  }
  if (ByteWidth(out_shape.element_type()) != ByteWidth(in->shape.element_type()) ||
      out_shape.ElementCount() != in->element_count()) {
    return Invalid("bitcast changes the element count or width");
  }
  // Layouts come from the instructions' shapes: values are logical, and a
  // value may be shared by instructions with other layouts (copy).
  const Shape& in_layout_shape = instruction.operand(0)->shape();
  const auto in_order = MajorToMinor(
      in_layout_shape.IsArray() && in_layout_shape.rank() == in->shape.rank() ? in_layout_shape
                                                                              : in->shape);
  const auto out_order = MajorToMinor(out_shape);
  // Logical -> physical for the operand.
  std::vector<int64_t> phys_dims(in_order.size());
  for (size_t i = 0; i < in_order.size(); ++i) phys_dims[i] = in->shape.dimensions(in_order[i]);
  Shape phys_in(in->shape.element_type(), phys_dims);
  ValuePtr physical = TransposeValue(in, in_order, phys_in);
  // Reinterpret as the result's physical dims, then back to logical order.
  std::vector<int64_t> out_phys_dims(out_order.size());
  for (size_t i = 0; i < out_order.size(); ++i)
    out_phys_dims[i] = out_shape.dimensions(out_order[i]);
  Shape phys_out(out_shape.element_type(), out_phys_dims);
  ValuePtr reinterpreted = ShareArray(physical, phys_out);
  return TransposeValue(reinterpreted, InversePermutation(out_order), out_shape);
}

absl::StatusOr<ValuePtr> EvalGather(const Instruction& instruction, const ValuePtr& operand,
                                    const ValuePtr& indices_value) {
  const auto& attrs = instruction.attrs();
  if (!attrs.gather_dimension_numbers) return Invalid("gather without dimension numbers");
  const GatherDimensionNumbers& dn = *attrs.gather_dimension_numbers;
  const Shape& out_shape = instruction.shape();
  const Shape& in_shape = operand->shape;
  const Shape& idx_shape = indices_value->shape;
  const int64_t rank = in_shape.rank();
  const auto& slice_sizes = attrs.gather_slice_sizes;
  if (static_cast<int64_t>(slice_sizes.size()) != rank) return Invalid("gather slice_sizes rank");
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > idx_shape.rank()) return Invalid("gather index_vector_dim");
  const int64_t index_len = ivd == idx_shape.rank() ? 1 : idx_shape.dimensions(ivd);
  if (index_len != static_cast<int64_t>(dn.start_index_map.size())) {
    return Invalid("gather start_index_map size");
  }
  const std::vector<int64_t> indices = ToInt64(*indices_value);
  const auto idx_strides = RowMajorStrides(idx_shape.dimensions());
  // Batch dims of the indices (all but the index vector dim).
  std::vector<int64_t> idx_batch_dims;
  for (int64_t d = 0; d < idx_shape.rank(); ++d) {
    if (d != ivd) idx_batch_dims.push_back(d);
  }
  std::vector<bool> is_offset(out_shape.rank(), false);
  for (int64_t d : dn.offset_dims) {
    if (d < 0 || d >= out_shape.rank()) return Invalid("gather offset_dims");
    is_offset[d] = true;
  }
  std::vector<int64_t> out_batch_dims;
  for (int64_t d = 0; d < out_shape.rank(); ++d) {
    if (!is_offset[d]) out_batch_dims.push_back(d);
  }
  if (out_batch_dims.size() != idx_batch_dims.size()) return Invalid("gather batch rank");
  // Operand dims that are windows (not collapsed, not batching).
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dn.collapsed_slice_dims.begin(), dn.collapsed_slice_dims.end(), d) ==
            dn.collapsed_slice_dims.end() &&
        std::find(dn.operand_batching_dims.begin(), dn.operand_batching_dims.end(), d) ==
            dn.operand_batching_dims.end()) {
      window_operand_dims.push_back(d);
    }
  }
  if (window_operand_dims.size() != dn.offset_dims.size()) return Invalid("gather offset rank");
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > in_shape.dimensions(d)) {
      return Invalid("gather slice size exceeds the operand");
    }
  }
  std::vector<int64_t> sorted_offset = dn.offset_dims;
  std::sort(sorted_offset.begin(), sorted_offset.end());
  for (size_t i = 0; i < sorted_offset.size(); ++i) {
    if (out_shape.dimensions(sorted_offset[i]) != slice_sizes[window_operand_dims[i]]) {
      return Invalid("gather output offset dim size");
    }
  }
  for (size_t i = 0; i < out_batch_dims.size(); ++i) {
    if (out_shape.dimensions(out_batch_dims[i]) != idx_shape.dimensions(idx_batch_dims[i])) {
      return Invalid("gather output batch dim size");
    }
  }
  for (int64_t d : dn.start_index_map) {
    if (d < 0 || d >= rank) return Invalid("gather start_index_map");
  }
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return Invalid("gather batching dims");
  }

  auto out = NewArray(out_shape);
  const int width = ByteWidth(out_shape.element_type());
  const auto in_strides = RowMajorStrides(in_shape.dimensions());
  const auto out_strides = RowMajorStrides(out_shape.dimensions());
  std::vector<int64_t> copy_dims(sorted_offset.size()), src_strides(sorted_offset.size()),
      dst_strides(sorted_offset.size());
  for (size_t i = 0; i < sorted_offset.size(); ++i) {
    copy_dims[i] = slice_sizes[window_operand_dims[i]];
    src_strides[i] = in_strides[window_operand_dims[i]];
    dst_strides[i] = out_strides[sorted_offset[i]];
  }
  int64_t batch_count = 1;
  for (int64_t d : idx_batch_dims) batch_count *= idx_shape.dimensions(d);
  std::vector<int64_t> bidx(idx_batch_dims.size(), 0);
  std::vector<int64_t> start(rank);
  for (int64_t b = 0; b < batch_count; ++b) {
    // Linear position of the index vector in `indices`.
    int64_t idx_base = 0;
    for (size_t k = 0; k < idx_batch_dims.size(); ++k)
      idx_base += bidx[k] * idx_strides[idx_batch_dims[k]];
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < index_len; ++k) {
      const int64_t pos = idx_base + (ivd < idx_shape.rank() ? k * idx_strides[ivd] : 0);
      const int64_t d = dn.start_index_map[k];
      start[d] = std::clamp<int64_t>(indices[pos], 0, in_shape.dimensions(d) - slice_sizes[d]);
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      const int64_t idx_dim = dn.start_indices_batching_dims[i];
      auto it = std::find(idx_batch_dims.begin(), idx_batch_dims.end(), idx_dim);
      if (it == idx_batch_dims.end()) return Invalid("gather start_indices_batching_dims");
      start[dn.operand_batching_dims[i]] = bidx[it - idx_batch_dims.begin()];
    }
    int64_t src_off = 0;
    for (int64_t d = 0; d < rank; ++d) src_off += start[d] * in_strides[d];
    int64_t dst_off = 0;
    for (size_t k = 0; k < out_batch_dims.size(); ++k)
      dst_off += bidx[k] * out_strides[out_batch_dims[k]];
    StridedCopy(width, copy_dims, out->bytes() + dst_off * width, dst_strides,
                operand->bytes() + src_off * width, src_strides);
    for (int64_t k = static_cast<int64_t>(bidx.size()) - 1; k >= 0; --k) {
      if (++bidx[k] < idx_shape.dimensions(idx_batch_dims[k])) break;
      bidx[k] = 0;
    }
  }
  return ValuePtr(out);
}

// Start indices of dynamic-slice / dynamic-update-slice: scalars (or one
// rank-1 array in the old form), clamped so the window fits.
absl::StatusOr<std::vector<int64_t>> DynamicStarts(Operands index_operands, const Shape& shape,
                                                   std::span<const int64_t> sizes) {
  const int64_t rank = shape.rank();
  std::vector<int64_t> starts(rank, 0);
  if (index_operands.size() == 1 && index_operands[0]->shape.rank() == 1 &&
      index_operands[0]->element_count() == rank && rank != 1) {
    for (int64_t d = 0; d < rank; ++d) starts[d] = GetIndexElement(*index_operands[0], d);
  } else {
    if (static_cast<int64_t>(index_operands.size()) != rank) {
      return Invalid("wrong number of start indices");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (index_operands[d]->element_count() != 1) return Invalid("start index is not a scalar");
      starts[d] = GetIndexElement(*index_operands[d], 0);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] > shape.dimensions(d) || sizes[d] < 0) return Invalid("slice larger than operand");
    starts[d] = std::clamp<int64_t>(starts[d], 0, shape.dimensions(d) - sizes[d]);
  }
  return starts;
}

}  // namespace

absl::StatusOr<ValuePtr> EvalDataMovement(const Instruction& instruction, Operands operands) {
  const Opcode op = instruction.opcode();
  const Shape& shape = instruction.shape();
  const auto& attrs = instruction.attrs();
  if (op == Opcode::kIota) {
    if (!shape.IsArray()) return Invalid("iota of a non-array");
    const int64_t dim = attrs.iota_dimension;
    if (dim < 0 || dim >= std::max<int64_t>(shape.rank(), 1)) return Invalid("iota dimension");
    auto out = NewArray(shape);
    const int64_t n = shape.ElementCount();
    const int64_t size = shape.rank() == 0 ? 1 : shape.dimensions(dim);
    const int64_t stride = shape.rank() == 0 ? 1 : RowMajorStrides(shape.dimensions())[dim];
    bool ok = DispatchType(shape.element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out->mutable_as<T>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertElement<T>((i / stride) % size);
    });
    if (!ok) return absl::UnimplementedError("iota of this element type");
    return ValuePtr(out);
  }
  for (const ValuePtr& v : operands) {
    if (auto s = CheckArray(*v); !s.ok()) return s;
  }
  if (!shape.IsArray()) return Invalid("result is not an array");
  const ValuePtr& in = operands[0];
  const int width = ByteWidth(shape.element_type());
  if (op != Opcode::kBitcast && in->shape.element_type() != shape.element_type()) {
    return Invalid("operand and result element types differ");
  }
  const auto in_strides = RowMajorStrides(in->shape.dimensions());
  const int64_t rank = shape.rank();

  switch (op) {
    case Opcode::kReshape:
      if (in->element_count() != shape.ElementCount())
        return Invalid("reshape changes the element count");
      return ValuePtr(ShareArray(in, shape));
    case Opcode::kBitcast:
      return EvalBitcast(instruction, in);
    case Opcode::kCopy:
      if (in->element_count() != shape.ElementCount()) return Invalid("copy changes the shape");
      return in;
    case Opcode::kBroadcast: {
      const auto& dims = attrs.dimensions;
      if (static_cast<int64_t>(dims.size()) != in->shape.rank())
        return Invalid("broadcast dimensions");
      std::vector<int64_t> src_strides(rank, 0);
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] < 0 || dims[k] >= rank ||
            shape.dimensions(dims[k]) != in->shape.dimensions(k)) {
          return Invalid("broadcast dimension mismatch");
        }
        src_strides[dims[k]] = in_strides[k];
      }
      auto out = NewArray(shape);
      StridedCopy(width, shape.dimensions(), out->bytes(), RowMajorStrides(shape.dimensions()),
                  in->bytes(), src_strides);
      return ValuePtr(out);
    }
    case Opcode::kTranspose: {
      const auto& perm = attrs.dimensions;
      if (static_cast<int64_t>(perm.size()) != rank || in->shape.rank() != rank)
        return Invalid("transpose rank");
      std::vector<bool> seen(rank, false);
      for (int64_t i = 0; i < rank; ++i) {
        if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]] ||
            in->shape.dimensions(perm[i]) != shape.dimensions(i)) {
          return Invalid("transpose permutation");
        }
        seen[perm[i]] = true;
      }
      return TransposeValue(in, perm, shape);
    }
    case Opcode::kSlice: {
      if (static_cast<int64_t>(attrs.slice.size()) != rank || in->shape.rank() != rank)
        return Invalid("slice rank");
      int64_t offset = 0;
      std::vector<int64_t> src_strides(rank);
      for (int64_t d = 0; d < rank; ++d) {
        const SliceDimension& s = attrs.slice[d];
        // The size must match the bounds, except for an empty slice written with limit <= start.
        const bool empty = s.limit <= s.start && shape.dimensions(d) == 0;
        if (s.stride <= 0 || s.start < 0 || s.limit > in->shape.dimensions(d) ||
            ((s.limit - s.start + s.stride - 1) / s.stride != shape.dimensions(d) && !empty)) {
          return Invalid("slice bounds");
        }
        offset += s.start * in_strides[d];
        src_strides[d] = s.stride * in_strides[d];
      }
      auto out = NewArray(shape);
      StridedCopy(width, shape.dimensions(), out->bytes(), RowMajorStrides(shape.dimensions()),
                  in->bytes() + offset * width, src_strides);
      return ValuePtr(out);
    }
    case Opcode::kReverse: {
      if (in->shape.dimensions() != shape.dimensions()) return Invalid("reverse shape");
      int64_t offset = 0;
      std::vector<int64_t> src_strides = in_strides;
      for (int64_t d : attrs.dimensions) {
        if (d < 0 || d >= rank) return Invalid("reverse dimension");
        if (shape.dimensions(d) == 0) continue;
        offset += (shape.dimensions(d) - 1) * in_strides[d];
        src_strides[d] = -in_strides[d];
      }
      auto out = NewArray(shape);
      StridedCopy(width, shape.dimensions(), out->bytes(), RowMajorStrides(shape.dimensions()),
                  in->bytes() + offset * width, src_strides);
      return ValuePtr(out);
    }
    case Opcode::kConcatenate: {
      if (attrs.dimensions.size() != 1) return Invalid("concatenate dimension");
      const int64_t dim = attrs.dimensions[0];
      if (dim < 0 || dim >= rank) return Invalid("concatenate dimension");
      auto out = NewArray(shape);
      const auto out_strides = RowMajorStrides(shape.dimensions());
      int64_t at = 0;
      for (const ValuePtr& v : operands) {
        if (v->shape.rank() != rank || v->shape.element_type() != shape.element_type()) {
          return Invalid("concatenate operand shape");
        }
        for (int64_t d = 0; d < rank; ++d) {
          if (d != dim && v->shape.dimensions(d) != shape.dimensions(d))
            return Invalid("concatenate operand shape");
        }
        if (at + v->shape.dimensions(dim) > shape.dimensions(dim))
          return Invalid("concatenate size");
        StridedCopy(width, v->shape.dimensions(), out->bytes() + at * out_strides[dim] * width,
                    out_strides, v->bytes(), RowMajorStrides(v->shape.dimensions()));
        at += v->shape.dimensions(dim);
      }
      if (at != shape.dimensions(dim)) return Invalid("concatenate size");
      return ValuePtr(out);
    }
    case Opcode::kPad: {
      if (operands.size() != 2 || operands[1]->element_count() != 1) return Invalid("pad operands");
      if (static_cast<int64_t>(attrs.padding.size()) != rank || in->shape.rank() != rank)
        return Invalid("pad rank");
      auto out = NewArray(shape);
      FillWith(out->bytes(), operands[1]->bytes(), width, shape.ElementCount());
      const auto out_strides = RowMajorStrides(shape.dimensions());
      int64_t src_off = 0, dst_off = 0;
      std::vector<int64_t> dims(rank), src_strides(rank), dst_strides(rank);
      for (int64_t d = 0; d < rank; ++d) {
        const PaddingDimension& p = attrs.padding[d];
        const int64_t n = in->shape.dimensions(d);
        if (p.interior < 0) return Invalid("negative interior padding");
        const int64_t expected = p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior;
        if (expected != shape.dimensions(d)) return Invalid("pad result shape");
        const int64_t step = p.interior + 1;
        int64_t begin = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
        const int64_t last_pos = shape.dimensions(d) - 1 - p.low;
        int64_t end = last_pos < 0 ? 0 : std::min(n, last_pos / step + 1);
        dims[d] = std::max<int64_t>(end - begin, 0);
        src_off += begin * in_strides[d];
        dst_off += (p.low + begin * step) * out_strides[d];
        src_strides[d] = in_strides[d];
        dst_strides[d] = step * out_strides[d];
      }
      bool empty = false;
      for (int64_t d : dims) empty |= d <= 0;
      if (!empty) {
        StridedCopy(width, dims, out->bytes() + dst_off * width, dst_strides,
                    in->bytes() + src_off * width, src_strides);
      }
      return ValuePtr(out);
    }
    case Opcode::kDynamicSlice: {
      const auto& sizes = attrs.dynamic_slice_sizes;
      if (static_cast<int64_t>(sizes.size()) != rank || in->shape.rank() != rank)
        return Invalid("dynamic-slice rank");
      for (int64_t d = 0; d < rank; ++d) {
        if (sizes[d] != shape.dimensions(d)) return Invalid("dynamic-slice sizes");
      }
      HLOGYM_ASSIGN(starts, DynamicStarts(operands.subspan(1), in->shape, sizes));
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) offset += (starts)[d] * in_strides[d];
      auto out = NewArray(shape);
      StridedCopy(width, shape.dimensions(), out->bytes(), RowMajorStrides(shape.dimensions()),
                  in->bytes() + offset * width, in_strides);
      return ValuePtr(out);
    }
    case Opcode::kDynamicUpdateSlice: {
      if (operands.size() < 2) return Invalid("dynamic-update-slice operands");
      const ValuePtr& update = operands[1];
      if (update->shape.rank() != rank || in->shape.dimensions() != shape.dimensions() ||
          update->shape.element_type() != shape.element_type()) {
        return Invalid("dynamic-update-slice shapes");
      }
      HLOGYM_ASSIGN(starts,
                    DynamicStarts(operands.subspan(2), in->shape, update->shape.dimensions()));
      std::shared_ptr<Value> out = OverwritableCopy(operands[0], shape);
      int64_t offset = 0;
      for (int64_t d = 0; d < rank; ++d) offset += (starts)[d] * in_strides[d];
      StridedCopy(width, update->shape.dimensions(), out->bytes() + offset * width, in_strides,
                  update->bytes(), RowMajorStrides(update->shape.dimensions()));
      return ValuePtr(out);
    }
    case Opcode::kGather:
      if (operands.size() != 2) return Invalid("gather operands");
      return EvalGather(instruction, in, operands[1]);
    default:
      return absl::UnimplementedError(absl::StrCat("data movement opcode ", OpName(op)));
  }
}

}  // namespace hlogym::eval
