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

// start_indices as [N] (scalar indices, index_vector_dim == rank) or [N, K]:
// the index vector moved last by a transpose (none for the identity), then the
// other dimensions collapsed by a reshape, even one that keeps the shape, as
// XLA's gather expander does.
absl::StatusOr<Instruction*> CanonicalIndices(Instruction* indices, int64_t index_vector_dim) {
  const int64_t rank = indices->shape().rank();
  HLOGYM_ASSIGN(transposed, gather_scatter::IndexVectorLast(indices, index_vector_dim));
  const int64_t index_dims = index_vector_dim == rank ? 0 : 1;
  const std::vector<int64_t>& dims = transposed->shape().dimensions();
  int64_t batch = 1;
  for (int64_t i = 0; i < rank - index_dims; ++i) batch *= dims[i];
  std::vector<int64_t> canonical = {batch};
  if (index_dims == 1) canonical.push_back(dims.back());
  return MakeReshape(transposed, canonical);
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
  HLOGYM_RETURN_IF_ERROR(gather_scatter::AddUnusedIndexConvert(i, indices->shape().element_type(),
                                                               indices->shape().dimensions(0)));
  HLOGYM_ASSIGN(i_vector, MakeBroadcast(i, std::vector<int64_t>{1}, {}));

  HLOGYM_ASSIGN(index_vector, gather_scatter::IndexVectorAt(indices, i_vector));
  const int64_t operand_rank = operand->shape().rank();
  HLOGYM_ASSIGN(operand_start, gather_scatter::IndexInOperandSpace(index_vector, dn.start_index_map,
                                                                   operand_rank));
  HLOGYM_ASSIGN(sliced, gather_scatter::DynamicSliceAt(operand, operand_start,
                                                       gather.attrs().gather_slice_sizes));
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!absl::c_linear_search(dn.collapsed_slice_dims, d))
      kept.push_back(gather.attrs().gather_slice_sizes[d]);
  }
  HLOGYM_ASSIGN(collapsed, MakeReshape(sliced, kept));
  std::vector<int64_t> row_dims = {1};
  row_dims.insert(row_dims.end(), kept.begin(), kept.end());
  HLOGYM_ASSIGN(row, MakeReshape(collapsed, row_dims));
  HLOGYM_ASSIGN(row_start,
                gather_scatter::PadWithZeros(i_vector, 0, static_cast<int64_t>(kept.size())));
  HLOGYM_ASSIGN(updated, gather_scatter::DynamicUpdateSliceAt(accumulator, row, row_start));
  return std::vector<Instruction*>{operand, indices, updated};
}

absl::StatusOr<Instruction*> Expand(Instruction* gather) {
  if (IsBroadcast(gather)) return ExpandBroadcast(gather);
  const GatherDimensionNumbers dn = *gather->attrs().gather_dimension_numbers;
  Computation* computation = gather->parent();
  Instruction* operand = gather->operand(0);
  Instruction* indices = gather->operand(1);
  const int64_t trip_count = TripCount(gather);
  HLOGYM_ASSIGN(canonical, CanonicalIndices(indices, dn.index_vector_dim));
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
