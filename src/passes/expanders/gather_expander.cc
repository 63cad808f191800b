#include "passes/expanders/gather_expander.h"

#include <algorithm>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/expanders/gather_scatter_utils.h"
#include "passes/pass_utils.h"
#include "passes/while_loop/while_util.h"

namespace hlogym {
namespace {

int64_t TripCount(const Instruction* gather) {
  const int64_t index_vector_dim = gather->attrs().gather_dimension_numbers->index_vector_dim;
  return gather_scatter::IndexVectorCount(gather->operand(1)->shape(), index_vector_dim);
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
    if (!absl::c_linear_search(dn.collapsed_slice_dims, d))
      kept.push_back(operand->shape().dimensions(d));
  }
  HLOGYM_ASSIGN(reshaped, MakeReshape(operand, kept));
  return MakeBroadcast(reshaped, gather->shape().dimensions(), dn.offset_dims);
}

// The index vector `v` (rank 1) padded with `prepend` and `append` zeros.
absl::StatusOr<Instruction*> PadWithZeros(Instruction* v, int64_t prepend, int64_t append) {
  Instruction* zero =
      MakeScalarConstant(v->parent(), v->shape().element_type(), 0, v->shape().has_layout());
  PaddingDimension padding[] = {{prepend, append, 0}};
  return MakePad(v, zero, padding);
}

// The components of the index vector `start` as scalars (slice + reshape
// each), as XLA's dynamic-slice builders take a vector start.
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

// One iteration: row `i` of the accumulator gets the slice at index vector i.
// Built as XLA builds it (index vectors, concatenate, pads, reshapes that
// keep the shape, an unused zero vector), so the op counts match XLA's.
absl::StatusOr<std::vector<Instruction*>> LoopBody(const Instruction& gather, Instruction* i,
                                                   const std::vector<Instruction*>& state) {
  const GatherDimensionNumbers& dn = *gather.attrs().gather_dimension_numbers;
  Instruction* operand = state[0];
  Instruction* indices = state[1];
  Instruction* accumulator = state[2];
  Computation* body = i->parent();
  HLOGYM_ASSIGN(i_vector, MakeBroadcast(i, std::vector<int64_t>{1}, {}));

  Instruction* index_vector = nullptr;
  if (indices->shape().rank() == 1) {
    HLOGYM_ASSIGN(one, DynamicSliceAt(indices, i_vector, {1}));
    index_vector = one;
  } else {
    const int64_t k = indices->shape().dimensions(1);
    HLOGYM_ASSIGN(row_start, PadWithZeros(i_vector, 0, 1));
    HLOGYM_ASSIGN(row, DynamicSliceAt(indices, row_start, {1, k}));
    HLOGYM_ASSIGN(vector, MakeReshape(row, std::vector<int64_t>{k}));
    index_vector = vector;
  }

  // The operand start: index components per start_index_map, zero elsewhere.
  const int64_t operand_rank = operand->shape().rank();
  const PrimitiveType index_type = indices->shape().element_type();
  const bool with_layout = indices->shape().has_layout();
  Instruction* operand_start = nullptr;
  if (operand_rank == 0) {
    operand_start = MakeConstant(body, Literal(Shape(index_type, {0})), with_layout);
  } else {
    Literal zero_literal(Shape(index_type, {1}));
    Instruction* zero = MakeConstant(body, std::move(zero_literal), with_layout);
    std::vector<Instruction*> components;
    for (int64_t d = 0; d < operand_rank; ++d) {
      auto it = std::find(dn.start_index_map.begin(), dn.start_index_map.end(), d);
      if (it == dn.start_index_map.end()) {
        components.push_back(zero);
        continue;
      }
      const int64_t c = it - dn.start_index_map.begin();
      SliceDimension slice[] = {{c, c + 1, 1}};
      HLOGYM_ASSIGN(component, MakeSlice(index_vector, slice));
      components.push_back(component);
    }
    HLOGYM_ASSIGN(concat, MakeConcatenate(components, 0));
    operand_start = concat;
  }
  HLOGYM_ASSIGN(sliced, DynamicSliceAt(operand, operand_start, gather.attrs().gather_slice_sizes));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!absl::c_linear_search(dn.collapsed_slice_dims, d))
      kept.push_back(gather.attrs().gather_slice_sizes[d]);
  }
  HLOGYM_ASSIGN(collapsed, MakeReshape(sliced, kept));
  std::vector<int64_t> row_dims = {1};
  row_dims.insert(row_dims.end(), kept.begin(), kept.end());
  HLOGYM_ASSIGN(row, MakeReshape(collapsed, row_dims));
  HLOGYM_ASSIGN(row_start, PadWithZeros(i_vector, 0, static_cast<int64_t>(kept.size())));
  HLOGYM_ASSIGN(updated, DynamicUpdateSliceAt(accumulator, row, row_start));
  return std::vector<Instruction*>{operand, indices, updated};
}

absl::StatusOr<Instruction*> Expand(Instruction* gather) {
  if (IsBroadcast(gather)) return ExpandBroadcast(gather);
  const GatherDimensionNumbers dn = *gather->attrs().gather_dimension_numbers;
  Computation* computation = gather->parent();
  Instruction* operand = gather->operand(0);
  Instruction* indices = gather->operand(1);
  const int64_t trip_count = TripCount(gather);
  HLOGYM_ASSIGN(canonical, gather_scatter::CanonicalIndices(indices, dn.index_vector_dim,
                                                            /*always_reshape=*/true));
  std::vector<int64_t> accumulator_dims = {trip_count};
  for (size_t d = 0; d < gather->attrs().gather_slice_sizes.size(); ++d) {
    if (!absl::c_linear_search(dn.collapsed_slice_dims, static_cast<int64_t>(d))) {
      accumulator_dims.push_back(gather->attrs().gather_slice_sizes[d]);
    }
  }
  Instruction* zero = MakeScalarConstant(computation, gather->shape().element_type(), 0,
                                         gather->shape().has_layout());
  HLOGYM_ASSIGN(init, MakeBroadcast(zero, accumulator_dims, {}));
  const Instruction& original = *gather;
  HLOGYM_ASSIGN(results,
                MakeCountedLoop(computation, trip_count, {operand, canonical, init},
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
  HLOGYM_ASSIGN(batched, MakeReshape(accumulator, batched_dims));
  // Batch dimensions lead, offset dimensions follow: move them into place.
  const int64_t output_rank = gather->shape().rank();
  std::vector<int64_t> permutation;
  int64_t next_batch = 0, next_offset = output_rank - static_cast<int64_t>(dn.offset_dims.size());
  bool identity = true;
  for (int64_t d = 0; d < output_rank; ++d) {
    permutation.push_back(absl::c_linear_search(dn.offset_dims, d) ? next_offset++ : next_batch++);
    identity &= permutation.back() == d;
  }
  if (identity) return batched;
  return MakeTranspose(batched, permutation);
}

}  // namespace

absl::StatusOr<bool> GatherExpander::Run(Module& module) {
  const Mode mode = mode_;
  HLOGYM_ASSIGN(changed,
                ExpandMatchingInstructions(
                    module, name(),
                    [mode](const Instruction* instruction) { return Matches(instruction, mode); },
                    [](Instruction* gather) -> absl::StatusOr<Instruction*> {
                      HLOGYM_ASSIGN(expanded, Expand(gather));
                      (expanded)->set_shape(gather->shape());
                      return expanded;
                    }));
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

bool GatherExpander::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kGather,
                             [this](const Instruction& gather) { return Matches(&gather, mode_); });
}

}  // namespace hlogym
