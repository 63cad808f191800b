#include "passes/expanders/gather_scatter_utils.h"

#include <algorithm>
#include <memory>

#include "absl/algorithm/container.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym::gather_scatter {

absl::StatusOr<Instruction*> MaybeTranspose(Instruction* operand,
                                            std::span<const int64_t> permutation) {
  if (IsIdentityPermutation(permutation)) return operand;
  return MakeTranspose(operand, permutation);
}

absl::StatusOr<Instruction*> ReshapeTo(Instruction* operand, std::vector<int64_t> dims) {
  return MakeReshape(operand, dims);
}

absl::StatusOr<Instruction*> InsertDegenerateDims(Instruction* operand,
                                                  std::span<const int64_t> positions) {
  std::vector<int64_t> dims;
  const std::vector<int64_t>& old = operand->shape().dimensions();
  size_t next = 0;
  int64_t rank = static_cast<int64_t>(old.size() + positions.size());
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(positions.begin(), positions.end(), i) != positions.end()) {
      dims.push_back(1);
    } else {
      dims.push_back(old[next++]);
    }
  }
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> ElideDegenerateDims(Instruction* operand,
                                                 std::span<const int64_t> elided) {
  auto is_elided = [&](int64_t dim) { return absl::c_linear_search(elided, dim); };
  std::vector<int64_t> dims;
  const std::vector<int64_t>& old = operand->shape().dimensions();
  for (int64_t i = 0; i < static_cast<int64_t>(old.size()); ++i) {
    if (!is_elided(i)) dims.push_back(old[i]);
  }
  HLOGYM_ASSIGN(reshape, ReshapeTo(operand, std::move(dims)));
  if (operand->shape().has_layout()) {
    // As XLA's: the kept dimensions stay in the operand's order in memory (a
    // transposed layout stays transposed), so the reshape is a bitcast.
    std::vector<int64_t> minor_to_major;
    for (int64_t dim : MinorToMajor(operand->shape())) {
      if (is_elided(dim)) continue;
      minor_to_major.push_back(
          dim - std::count_if(elided.begin(), elided.end(), [&](int64_t e) { return e < dim; }));
    }
    reshape->set_shape(WithMinorToMajor(reshape->shape(), std::move(minor_to_major)));
  }
  return reshape;
}

absl::StatusOr<Instruction*> CollapseFirstNDims(Instruction* operand, int64_t n) {
  const std::vector<int64_t>& old = operand->shape().dimensions();
  int64_t merged = 1;
  for (int64_t i = 0; i < n; ++i) merged *= old[i];
  std::vector<int64_t> dims = {merged};
  dims.insert(dims.end(), old.begin() + n, old.end());
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> ExpandFirstDimIntoNDims(Instruction* operand,
                                                     std::span<const int64_t> expanded) {
  const std::vector<int64_t>& old = operand->shape().dimensions();
  std::vector<int64_t> dims(expanded.begin(), expanded.end());
  dims.insert(dims.end(), old.begin() + 1, old.end());
  return ReshapeTo(operand, std::move(dims));
}

absl::StatusOr<Instruction*> IndexVectorLast(Instruction* indices, int64_t index_vector_dim) {
  const int64_t rank = indices->shape().rank();
  if (index_vector_dim >= rank - 1) return indices;
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != index_vector_dim) permutation.push_back(i);
  }
  permutation.push_back(index_vector_dim);
  return MaybeTranspose(indices, permutation);  // never the identity here
}

absl::StatusOr<Instruction*> TransformStartIndices(Instruction* indices, int64_t index_vector_dim) {
  int64_t rank = indices->shape().rank();
  if (index_vector_dim == rank) {
    const int64_t position[] = {index_vector_dim};
    auto made = InsertDegenerateDims(indices, position);
    if (!made.ok()) return made;
    indices = *made;
    ++rank;
  } else {
    auto made = IndexVectorLast(indices, index_vector_dim);
    if (!made.ok()) return made;
    indices = *made;
  }
  if (rank > 2) return CollapseFirstNDims(indices, rank - 1);
  if (rank == 1) {
    const int64_t position[] = {0};
    return InsertDegenerateDims(indices, position);
  }
  return indices;
}

absl::StatusOr<Instruction*> PadWithZeros(Instruction* v, int64_t prepend, int64_t append) {
  Instruction* zero =
      MakeScalarConstant(v->parent(), v->shape().element_type(), 0, v->shape().has_layout());
  PaddingDimension padding[] = {{prepend, append, 0}};
  return MakePad(v, zero, padding);
}

namespace {

// The components of the index vector `start` as scalars (slice and reshape each).
absl::StatusOr<std::vector<Instruction*>> StartScalars(Instruction* start, int64_t count) {
  std::vector<Instruction*> scalars;
  for (int64_t d = 0; d < count; ++d) {
    SliceDimension slice[] = {{d, d + 1, 1}};
    HLOGYM_ASSIGN(element, MakeSlice(start, slice));
    HLOGYM_ASSIGN(scalar, MakeReshape(element, {}));
    scalars.push_back(scalar);
  }
  return scalars;
}

}  // namespace

absl::StatusOr<Instruction*> DynamicSliceAt(Instruction* operand, Instruction* start,
                                            const std::vector<int64_t>& sizes) {
  HLOGYM_ASSIGN(scalars, StartScalars(start, operand->shape().rank()));
  auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice,
                                          Shape(operand->shape().element_type(), sizes));
  ds->AppendOperand(operand);
  for (Instruction* scalar : scalars) ds->AppendOperand(scalar);
  ds->mutable_attrs().dynamic_slice_sizes = sizes;
  return AddWithLayoutOf(operand->parent(), std::move(ds), operand);
}

absl::StatusOr<Instruction*> DynamicUpdateSliceAt(Instruction* operand, Instruction* update,
                                                  Instruction* start) {
  HLOGYM_ASSIGN(scalars, StartScalars(start, operand->shape().rank()));
  auto dus = std::make_unique<Instruction>(Opcode::kDynamicUpdateSlice, operand->shape());
  dus->AppendOperand(operand);
  dus->AppendOperand(update);
  for (Instruction* scalar : scalars) dus->AppendOperand(scalar);
  Instruction* added = AddWithLayoutOf(operand->parent(), std::move(dus), operand);
  added->set_shape(operand->shape());
  return added;
}

absl::StatusOr<Instruction*> IndexVectorAt(Instruction* indices, Instruction* i_vector) {
  if (indices->shape().rank() == 1) return DynamicSliceAt(indices, i_vector, {1});
  const int64_t k = indices->shape().dimensions(1);
  HLOGYM_ASSIGN(row_start, PadWithZeros(i_vector, 0, 1));
  HLOGYM_ASSIGN(row, DynamicSliceAt(indices, row_start, {1, k}));
  return MakeReshape(row, std::vector<int64_t>{k});
}

absl::StatusOr<Instruction*> IndexInOperandSpace(Instruction* index_vector,
                                                 std::span<const int64_t> dims_map,
                                                 int64_t operand_rank) {
  Computation* body = index_vector->parent();
  const PrimitiveType index_type = index_vector->shape().element_type();
  const bool with_layout = index_vector->shape().has_layout();
  if (operand_rank == 0) return MakeConstant(body, Literal(Shape(index_type, {0})), with_layout);
  Instruction* zero = MakeConstant(body, Literal(Shape(index_type, {1})), with_layout);
  std::vector<Instruction*> components;
  for (int64_t d = 0; d < operand_rank; ++d) {
    auto it = std::find(dims_map.begin(), dims_map.end(), d);
    if (it == dims_map.end()) {
      components.push_back(zero);
      continue;
    }
    const int64_t c = it - dims_map.begin();
    SliceDimension slice[] = {{c, c + 1, 1}};
    HLOGYM_ASSIGN(component, MakeSlice(index_vector, slice));
    components.push_back(component);
  }
  return MakeConcatenate(components, 0);
}

absl::Status AddUnusedIndexConvert(Instruction* i, PrimitiveType index_type, int64_t trip_count) {
  if (trip_count != 1 || index_type == i->shape().element_type()) return absl::OkStatus();
  return MakeConvert(i, index_type).status();
}

int64_t IndexVectorCount(const Shape& indices, int64_t index_vector_dim) {
  int64_t count = 1;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != index_vector_dim) count *= indices.dimensions(i);
  }
  return count;
}

}  // namespace hlogym::gather_scatter
