#include "passes/expanders/scatter_expander.h"

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

int64_t TripCount(const Instruction* scatter) {
  const int64_t index_vector_dim = scatter->attrs().scatter_dimension_numbers->index_vector_dim;
  return gather_scatter::IndexVectorCount(scatter->operand(1)->shape(), index_vector_dim);
}

bool Matches(const Instruction* scatter, ScatterExpander::Mode mode) {
  if (scatter->opcode() != Opcode::kScatter || scatter->operand_count() != 3 ||
      !scatter->attrs().scatter_dimension_numbers.has_value() || scatter->to_apply() == nullptr ||
      !scatter->shape().IsArray()) {
    return false;
  }
  for (const Instruction* operand : scatter->operands()) {
    if (!operand->shape().IsArray()) return false;
  }
  const ScatterDimensionNumbers& dn = *scatter->attrs().scatter_dimension_numbers;
  if (!dn.input_batching_dims.empty() || !dn.scatter_indices_batching_dims.empty()) return false;
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > scatter->operand(1)->shape().rank()) {
    return false;  // malformed: left for the verifier to report
  }
  const Shape& indices = scatter->operand(1)->shape();
  const int64_t vector_size =
      dn.index_vector_dim == indices.rank() ? 1 : indices.dimensions(dn.index_vector_dim);
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vector_size ||
      dn.update_window_dims.size() + dn.inserted_window_dims.size() !=
          static_cast<size_t>(scatter->operand(0)->shape().rank())) {
    return false;
  }
  switch (mode) {
    case ScatterExpander::Mode::kEliminateAllScatters:
      return true;
    case ScatterExpander::Mode::kEliminateSimpleScatters:
      return TripCount(scatter) == 1;
    case ScatterExpander::Mode::kEliminateGpuUnsupportedScatters:
      // XLA's GPU scatter emitter cannot scatter elements wider than 64 bits.
      return BitWidth(scatter->shape().element_type()) > 64;
  }
  return false;
}

// indices as [N] (one component each) or [N, K], as XLA canonicalizes them: the
// index vector moved last, then every other dimension collapsed into one, with
// a reshape even where it keeps the shape. An index vector of one component
// counts as scalar indices (its dimension goes in the collapse), and XLA
// leaves behind the unused reshape it made to tell.
absl::StatusOr<Instruction*> CanonicalIndices(Instruction* indices, int64_t index_vector_dim) {
  const int64_t rank = indices->shape().rank();
  HLOGYM_ASSIGN(transposed, gather_scatter::IndexVectorLast(indices, index_vector_dim));
  bool scalar_indices = index_vector_dim == rank;
  if (index_vector_dim == rank - 1 && indices->shape().dimensions(index_vector_dim) == 1) {
    const int64_t elided[] = {index_vector_dim};
    HLOGYM_RETURN_IF_ERROR(gather_scatter::ElideDegenerateDims(indices, elided).status());
    scalar_indices = true;
  }
  const int64_t index_dims = scalar_indices ? 0 : 1;
  if (rank == index_dims) {
    const int64_t position[] = {0};
    return gather_scatter::InsertDegenerateDims(transposed, position);
  }
  return gather_scatter::CollapseFirstNDims(transposed, rank - index_dims);
}

// updates as [N, window dims...]: a transpose (XLA's, the identity
// included) and a reshape.
absl::StatusOr<Instruction*> CanonicalUpdates(Instruction* updates, const Shape& indices,
                                              const ScatterDimensionNumbers& dn) {
  const int64_t rank = updates->shape().rank();
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < rank; ++d) {
    if (!absl::c_linear_search(dn.update_window_dims, d)) permutation.push_back(d);
  }
  permutation.insert(permutation.end(), dn.update_window_dims.begin(), dn.update_window_dims.end());
  HLOGYM_ASSIGN(permuted, MakeTranspose(updates, permutation));
  const int64_t scatter_dims = indices.rank() - (dn.index_vector_dim < indices.rank() ? 1 : 0);
  if (scatter_dims == 0) {
    const int64_t position[] = {0};
    return gather_scatter::InsertDegenerateDims(permuted, position);
  }
  return gather_scatter::CollapseFirstNDims(permuted, scatter_dims);
}

// Whether the window at `start` (a start index vector in operand space) lies
// inside an operand of `operand_shape`, as a pred of the window's shape;
// nullptr for a scalar operand. Built as XLA builds it, which later passes do
// not scalarize: `start` compared with 0 and with size - window element-wise,
// and-ed, reduced with `and` and broadcast.
absl::StatusOr<Instruction*> WindowInBounds(Instruction* start, const Shape& operand_shape,
                                            const std::vector<int64_t>& window_sizes) {
  const int64_t rank = operand_shape.rank();
  if (rank == 0) return nullptr;
  Computation* body = start->parent();
  const bool with_layout = start->shape().has_layout();
  const PrimitiveType index_type = start->shape().element_type();
  Instruction* zero_scalar = MakeScalarConstant(body, index_type, 0, with_layout);
  HLOGYM_ASSIGN(zeros, MakeBroadcast(zero_scalar, std::vector<int64_t>{rank}, {}));
  HLOGYM_ASSIGN(not_negative, MakeCompare(ComparisonDirection::kLe, zeros, start));
  Literal limits{Shape(index_type, {rank})};
  for (int64_t d = 0; d < rank; ++d) {
    limits.SetFromInt64(d, operand_shape.dimensions(d) - window_sizes[d]);
  }
  Instruction* limit = MakeConstant(body, std::move(limits), with_layout);
  HLOGYM_ASSIGN(not_past_end, MakeCompare(ComparisonDirection::kGe, limit, start));
  HLOGYM_ASSIGN(each, MakeBinary(Opcode::kAnd, not_negative, not_past_end));
  Computation* all_of = AddScalarBinaryComputation(*body->parent(), "and.reduce_sub_computation",
                                                   Opcode::kAnd, PrimitiveType::kPred, with_layout);
  Instruction* all_true = MakeScalarConstant(body, PrimitiveType::kPred, 1, with_layout);
  HLOGYM_ASSIGN(all, MakeReduce(each, all_true, std::vector<int64_t>{0}, all_of));
  return MakeBroadcast(all, window_sizes, {});
}

// One iteration: the window at index vector `i` combined with update row `i`
// by the scatter's computation, where it lies inside the operand. Built as
// XLA builds it (vector start indices, pads, reshapes that keep the shape).
absl::StatusOr<std::vector<Instruction*>> LoopBody(const Instruction& scatter, Instruction* i,
                                                   const std::vector<Instruction*>& state) {
  const ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  Instruction* operand = state[0];
  Instruction* indices = state[1];
  Instruction* updates = state[2];
  const int64_t operand_rank = operand->shape().rank();
  HLOGYM_RETURN_IF_ERROR(gather_scatter::AddUnusedIndexConvert(i, indices->shape().element_type(),
                                                               indices->shape().dimensions(0)));
  HLOGYM_ASSIGN(i_vector, MakeBroadcast(i, std::vector<int64_t>{1}, {}));
  HLOGYM_ASSIGN(index_vector, gather_scatter::IndexVectorAt(indices, i_vector));
  HLOGYM_ASSIGN(start, gather_scatter::IndexInOperandSpace(
                           index_vector, dn.scatter_dims_to_operand_dims, operand_rank));

  // Update row i, with the inserted dimensions back as size 1.
  HLOGYM_ASSIGN(update_start,
                gather_scatter::PadWithZeros(i_vector, 0, updates->shape().rank() - 1));
  std::vector<int64_t> update_slice_sizes = updates->shape().dimensions();
  update_slice_sizes[0] = 1;
  HLOGYM_ASSIGN(update_row,
                gather_scatter::DynamicSliceAt(updates, update_start, update_slice_sizes));
  const int64_t row_dim[] = {0};
  HLOGYM_ASSIGN(update_elided, gather_scatter::ElideDegenerateDims(update_row, row_dim));
  HLOGYM_ASSIGN(update_window,
                gather_scatter::InsertDegenerateDims(update_elided, dn.inserted_window_dims));
  const std::vector<int64_t> window_sizes = update_window->shape().dimensions();
  HLOGYM_ASSIGN(old_window, gather_scatter::DynamicSliceAt(operand, start, window_sizes));
  HLOGYM_ASSIGN(valid, WindowInBounds(start, operand->shape(), window_sizes));

  Instruction* windows[] = {old_window, update_window};
  Instruction* combined = MakeMap(i->parent(), old_window->shape(), windows, scatter.to_apply());

  Instruction* new_window = combined;
  if (valid != nullptr) {
    HLOGYM_ASSIGN(chosen, MakeSelect(valid, combined, old_window));
    new_window = chosen;
  }
  HLOGYM_ASSIGN(updated, gather_scatter::DynamicUpdateSliceAt(operand, new_window, start));
  return std::vector<Instruction*>{updated, indices, updates};
}

absl::StatusOr<Instruction*> Expand(Instruction* scatter) {
  const ScatterDimensionNumbers dn = *scatter->attrs().scatter_dimension_numbers;
  Instruction* operand = scatter->operand(0);
  Instruction* indices = scatter->operand(1);
  Instruction* updates = scatter->operand(2);
  if (updates->shape().ElementCount() == 0) return operand;
  const int64_t trip_count = TripCount(scatter);
  HLOGYM_ASSIGN(canonical_indices, CanonicalIndices(indices, dn.index_vector_dim));
  HLOGYM_ASSIGN(canonical_updates, CanonicalUpdates(updates, indices->shape(), dn));
  const Instruction& original = *scatter;
  HLOGYM_ASSIGN(results,
                MakeCountedLoop(scatter->parent(), trip_count,
                                {operand, canonical_indices, canonical_updates},
                                [&](Instruction* i, const std::vector<Instruction*>& state) {
                                  return LoopBody(original, i, state);
                                }));
  return results[0];
}

}  // namespace

absl::StatusOr<bool> ScatterExpander::Run(Module& module) {
  const Mode mode = mode_;
  HLOGYM_ASSIGN(changed,
                ExpandMatchingInstructions(
                    module, name(),
                    [mode](const Instruction* instruction) { return Matches(instruction, mode); },
                    [](Instruction* scatter) -> absl::StatusOr<Instruction*> {
                      HLOGYM_ASSIGN(expanded, Expand(scatter));
                      if (expanded != scatter->operand(0)) (expanded)->set_shape(scatter->shape());
                      return expanded;
                    }));
  if (changed) module.SortComputationsCalleesFirst();
  return changed;
}

bool ScatterExpander::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kScatter, [this](const Instruction& scatter) {
    return Matches(&scatter, mode_);
  });
}

}  // namespace hlogym
