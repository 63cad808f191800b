#include "passes/gather_expander.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"
#include "passes/while_util.h"

namespace hlogym {
namespace {

#define GE_ASSIGN(lhs, expr)                    \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *lhs##_or

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t TripCount(const Instruction* gather) {
  const Shape& indices = gather->operand(1)->shape();
  const int64_t ivd = gather->attrs().gather_dimension_numbers->index_vector_dim;
  int64_t count = 1;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != ivd) count *= indices.dimensions(i);
  }
  return count;
}

bool IsBroadcast(const Instruction* gather) {
  return gather->attrs().gather_slice_sizes == gather->operand(0)->shape().dimensions();
}

bool Matches(const Instruction* gather, GatherExpander::Mode mode) {
  if (gather->opcode() != Opcode::kGather || gather->operand_count() != 2 ||
      !gather->attrs().gather_dimension_numbers.has_value() || !gather->shape().IsArray() ||
      gather->shape().ElementCount() == 0 || !gather->operand(0)->shape().IsArray() ||
      !gather->operand(1)->shape().IsArray()) {
    return false;
  }
  const GatherDimensionNumbers& dn = *gather->attrs().gather_dimension_numbers;
  if (!dn.operand_batching_dims.empty() || !dn.start_indices_batching_dims.empty()) return false;
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > gather->operand(1)->shape().rank() ||
      gather->attrs().gather_slice_sizes.size() !=
          static_cast<size_t>(gather->operand(0)->shape().rank())) {
    return false;  // malformed: left for the verifier to report
  }
  const Shape& indices = gather->operand(1)->shape();
  const int64_t vector_size =
      dn.index_vector_dim == indices.rank() ? 1 : indices.dimensions(dn.index_vector_dim);
  if (static_cast<int64_t>(dn.start_index_map.size()) != vector_size) return false;
  return mode == GatherExpander::Mode::kEliminateAllGathers || TripCount(gather) == 1 ||
         IsBroadcast(gather);
}

absl::StatusOr<Instruction*> ExpandBroadcast(Instruction* gather) {
  const GatherDimensionNumbers& dn = *gather->attrs().gather_dimension_numbers;
  Instruction* operand = gather->operand(0);
  if (operand->shape().ElementCount() == 0) {
    Instruction* zero = MakeScalarConstant(gather->parent(), gather->shape().element_type(), 0,
                                           gather->shape().has_layout());
    return MakeBroadcast(zero, gather->shape().dimensions(), {});
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand->shape().rank(); ++d) {
    if (!Contains(dn.collapsed_slice_dims, d)) kept.push_back(operand->shape().dimensions(d));
  }
  GE_ASSIGN(reshaped, MakeReshape(operand, kept));
  return MakeBroadcast(reshaped, gather->shape().dimensions(), dn.offset_dims);
}

// start_indices as [N] (scalar indices) or [N, K].
absl::StatusOr<Instruction*> CanonicalIndices(Instruction* indices, int64_t ivd) {
  const int64_t rank = indices->shape().rank();
  Instruction* transposed = indices;
  if (ivd < rank - 1) {
    std::vector<int64_t> permutation;
    for (int64_t i = 0; i < rank; ++i) {
      if (i != ivd) permutation.push_back(i);
    }
    permutation.push_back(ivd);
    GE_ASSIGN(t, MakeTranspose(indices, permutation));
    transposed = t;
  }
  const bool scalar_indices = ivd == rank;
  const int64_t index_dims = scalar_indices ? 0 : 1;
  const std::vector<int64_t>& dims = transposed->shape().dimensions();
  std::vector<int64_t> canonical;
  int64_t batch = 1;
  for (int64_t i = 0; i < rank - index_dims; ++i) batch *= dims[i];
  canonical.push_back(batch);
  if (!scalar_indices) canonical.push_back(dims.back());
  if (canonical == dims) return transposed;
  return MakeReshape(transposed, canonical);
}

// One iteration: row `i` of the accumulator gets the slice at index vector i.
absl::StatusOr<std::vector<Instruction*>> LoopBody(const Instruction& gather, Instruction* i,
                                                   const std::vector<Instruction*>& state) {
  const GatherDimensionNumbers& dn = *gather.attrs().gather_dimension_numbers;
  Instruction* operand = state[0];
  Instruction* indices = state[1];
  Instruction* accumulator = state[2];
  Computation* body = i->parent();
  const bool with_layout = i->shape().has_layout();
  Instruction* s32_zero = MakeScalarConstant(body, PrimitiveType::kS32, 0, with_layout);
  const PrimitiveType index_type = indices->shape().element_type();

  // The index vector as scalars of the index type.
  std::vector<Instruction*> components;
  if (indices->shape().rank() == 1) {
    auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice,
                                            Shape(index_type, {1}));
    ds->AppendOperand(indices);
    ds->AppendOperand(i);
    ds->mutable_attrs().dynamic_slice_sizes = {1};
    Instruction* one = AddWithLayoutOf(body, std::move(ds), indices);
    GE_ASSIGN(scalar, MakeReshape(one, {}));
    components.push_back(scalar);
  } else {
    const int64_t k = indices->shape().dimensions(1);
    auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice, Shape(index_type, {1, k}));
    ds->AppendOperand(indices);
    ds->AppendOperand(i);
    ds->AppendOperand(s32_zero);
    ds->mutable_attrs().dynamic_slice_sizes = {1, k};
    Instruction* row = AddWithLayoutOf(body, std::move(ds), indices);
    for (int64_t c = 0; c < k; ++c) {
      SliceDimension slice[2] = {{0, 1, 1}, {c, c + 1, 1}};
      GE_ASSIGN(element, MakeSlice(row, slice));
      GE_ASSIGN(scalar, MakeReshape(element, {}));
      components.push_back(scalar);
    }
  }
  const int64_t operand_rank = operand->shape().rank();
  Instruction* index_zero = MakeScalarConstant(body, index_type, 0, with_layout);
  auto slice = std::make_unique<Instruction>(
      Opcode::kDynamicSlice, Shape(operand->shape().element_type(), gather.attrs().gather_slice_sizes));
  slice->AppendOperand(operand);
  for (int64_t d = 0; d < operand_rank; ++d) {
    auto it = std::find(dn.start_index_map.begin(), dn.start_index_map.end(), d);
    slice->AppendOperand(it == dn.start_index_map.end()
                             ? index_zero
                             : components[it - dn.start_index_map.begin()]);
  }
  slice->mutable_attrs().dynamic_slice_sizes = gather.attrs().gather_slice_sizes;
  Instruction* sliced = AddWithLayoutOf(body, std::move(slice), operand);
  std::vector<int64_t> row_dims = {1};
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d)) {
      row_dims.push_back(gather.attrs().gather_slice_sizes[d]);
    }
  }
  GE_ASSIGN(row, MakeReshape(sliced, row_dims));
  auto update = std::make_unique<Instruction>(Opcode::kDynamicUpdateSlice, accumulator->shape());
  update->AppendOperand(accumulator);
  update->AppendOperand(row);
  update->AppendOperand(i);
  for (size_t d = 1; d < row_dims.size(); ++d) update->AppendOperand(s32_zero);
  Instruction* updated = AddWithLayoutOf(body, std::move(update), accumulator);
  updated->set_shape(accumulator->shape());
  return std::vector<Instruction*>{operand, indices, updated};
}

absl::StatusOr<Instruction*> Expand(Instruction* gather) {
  if (IsBroadcast(gather)) return ExpandBroadcast(gather);
  const GatherDimensionNumbers dn = *gather->attrs().gather_dimension_numbers;
  Computation* computation = gather->parent();
  Instruction* operand = gather->operand(0);
  Instruction* indices = gather->operand(1);
  const int64_t trip_count = TripCount(gather);
  GE_ASSIGN(canonical, CanonicalIndices(indices, dn.index_vector_dim));
  std::vector<int64_t> accumulator_dims = {trip_count};
  for (size_t d = 0; d < gather->attrs().gather_slice_sizes.size(); ++d) {
    if (!Contains(dn.collapsed_slice_dims, static_cast<int64_t>(d))) {
      accumulator_dims.push_back(gather->attrs().gather_slice_sizes[d]);
    }
  }
  Instruction* zero = MakeScalarConstant(computation, gather->shape().element_type(), 0,
                                         gather->shape().has_layout());
  GE_ASSIGN(init, MakeBroadcast(zero, accumulator_dims, {}));
  const Instruction& original = *gather;
  GE_ASSIGN(results, MakeCountedLoop(computation, trip_count, {operand, canonical, init},
                                     [&](Instruction* i, const std::vector<Instruction*>& state) {
                                       return LoopBody(original, i, state);
                                     }));
  Instruction* accumulator = results[2];
  // Split the loop dimension back into the batch dimensions.
  std::vector<int64_t> batched_dims;
  for (int64_t d = 0; d < indices->shape().rank(); ++d) {
    if (d != dn.index_vector_dim) batched_dims.push_back(indices->shape().dimensions(d));
  }
  batched_dims.insert(batched_dims.end(), accumulator_dims.begin() + 1, accumulator_dims.end());
  GE_ASSIGN(batched, MakeReshape(accumulator, batched_dims));
  // Batch dimensions lead, offset dimensions follow: move them into place.
  const int64_t output_rank = gather->shape().rank();
  std::vector<int64_t> permutation;
  int64_t next_batch = 0, next_offset = output_rank - static_cast<int64_t>(dn.offset_dims.size());
  bool identity = true;
  for (int64_t d = 0; d < output_rank; ++d) {
    permutation.push_back(Contains(dn.offset_dims, d) ? next_offset++ : next_batch++);
    identity &= permutation.back() == d;
  }
  if (identity) return batched;
  return MakeTranspose(batched, permutation);
}

#undef GE_ASSIGN

}  // namespace

absl::StatusOr<bool> GatherExpander::Run(Module& module) {
  const Mode mode = mode_;
  auto changed = ExpandMatchingInstructions(
      module, [mode](const Instruction* instruction) { return Matches(instruction, mode); },
      [](Instruction* gather) -> absl::StatusOr<Instruction*> {
        auto expanded = Expand(gather);
        if (!expanded.ok()) return expanded.status();
        (*expanded)->set_shape(gather->shape());
        return *expanded;
      });
  if (!changed.ok()) return changed.status();
  if (*changed) module.SortComputationsCalleesFirst();
  return *changed;
}

}  // namespace hlogym
