#include "passes/expanders/scatter_expander.h"

#include <algorithm>
#include <numeric>
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

// updates as [N, window dims...].
absl::StatusOr<Instruction*> CanonicalUpdates(Instruction* updates,
                                              const std::vector<int64_t>& window_dims,
                                              int64_t trip_count) {
  const int64_t rank = updates->shape().rank();
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < rank; ++d) {
    if (!absl::c_linear_search(window_dims, d)) permutation.push_back(d);
  }
  permutation.insert(permutation.end(), window_dims.begin(), window_dims.end());
  Instruction* permuted = updates;
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (permutation != identity) {
    HLOGYM_ASSIGN(t, MakeTranspose(updates, permutation));
    permuted = t;
  }
  std::vector<int64_t> canonical = {trip_count};
  for (int64_t d : window_dims) canonical.push_back(updates->shape().dimensions(d));
  if (canonical == permuted->shape().dimensions()) return permuted;
  return MakeReshape(permuted, canonical);
}

// Whether the window at the start index the scatter's index `components` give lies inside an
// operand of `operand_shape`, as a scalar pred; nullptr for a scalar operand. Built as XLA builds
// it, which later passes do not scalarize: the start index in operand space as a vector (each
// component, or a zero where the scatter does not index), compared with 0 and with size - window
// element-wise, and-ed and reduced with `and`.
absl::StatusOr<Instruction*> WindowInBounds(const ScatterDimensionNumbers& dn,
                                            const std::vector<Instruction*>& components,
                                            const Shape& operand_shape,
                                            const std::vector<int64_t>& window_sizes) {
  const int64_t rank = operand_shape.rank();
  if (rank == 0 || components.empty()) return nullptr;
  Computation* body = components.front()->parent();
  const bool with_layout = components.front()->shape().has_layout();
  const PrimitiveType index_type = components.front()->shape().element_type();
  Instruction* zero = MakeConstant(body, Literal(Shape(index_type, {1})), with_layout);
  std::vector<Instruction*> pieces;
  for (int64_t d = 0; d < rank; ++d) {
    auto it = absl::c_find(dn.scatter_dims_to_operand_dims, d);
    if (it == dn.scatter_dims_to_operand_dims.end()) {
      pieces.push_back(zero);
      continue;
    }
    HLOGYM_ASSIGN(piece, MakeReshape(components[it - dn.scatter_dims_to_operand_dims.begin()],
                                     std::vector<int64_t>{1}));
    pieces.push_back(piece);
  }
  HLOGYM_ASSIGN(start, MakeConcatenate(pieces, 0));
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
  return MakeReduce(each, all_true, std::vector<int64_t>{0}, all_of);
}

absl::StatusOr<std::vector<Instruction*>> LoopBody(const Instruction& scatter, Instruction* i,
                                                   const std::vector<Instruction*>& state) {
  const ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  Instruction* operand = state[0];
  Instruction* indices = state[1];
  Instruction* updates = state[2];
  Computation* body = i->parent();
  const bool with_layout = i->shape().has_layout();
  Instruction* s32_zero = MakeScalarConstant(body, PrimitiveType::kS32, 0, with_layout);
  const PrimitiveType index_type = indices->shape().element_type();
  const int64_t operand_rank = operand->shape().rank();

  std::vector<Instruction*> components;
  if (indices->shape().rank() == 1) {
    auto ds = std::make_unique<Instruction>(Opcode::kDynamicSlice, Shape(index_type, {1}));
    ds->AppendOperand(indices);
    ds->AppendOperand(i);
    ds->mutable_attrs().dynamic_slice_sizes = {1};
    Instruction* one = AddWithLayoutOf(body, std::move(ds), indices);
    HLOGYM_ASSIGN(scalar, MakeReshape(one, {}));
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
      HLOGYM_ASSIGN(element, MakeSlice(row, slice));
      HLOGYM_ASSIGN(scalar, MakeReshape(element, {}));
      components.push_back(scalar);
    }
  }
  Instruction* index_zero = MakeScalarConstant(body, index_type, 0, with_layout);
  std::vector<Instruction*> start;
  for (int64_t d = 0; d < operand_rank; ++d) {
    auto it = std::find(dn.scatter_dims_to_operand_dims.begin(),
                        dn.scatter_dims_to_operand_dims.end(), d);
    start.push_back(it == dn.scatter_dims_to_operand_dims.end()
                        ? index_zero
                        : components[it - dn.scatter_dims_to_operand_dims.begin()]);
  }

  // The update window, with the inserted dimensions back as size 1.
  std::vector<int64_t> update_slice_sizes = updates->shape().dimensions();
  update_slice_sizes[0] = 1;
  auto update_ds = std::make_unique<Instruction>(
      Opcode::kDynamicSlice, Shape(updates->shape().element_type(), update_slice_sizes));
  update_ds->AppendOperand(updates);
  update_ds->AppendOperand(i);
  for (size_t d = 1; d < update_slice_sizes.size(); ++d) update_ds->AppendOperand(s32_zero);
  update_ds->mutable_attrs().dynamic_slice_sizes = update_slice_sizes;
  Instruction* update_row = AddWithLayoutOf(body, std::move(update_ds), updates);
  std::vector<int64_t> window_sizes;
  for (int64_t d = 0, w = 1; d < operand_rank; ++d) {
    window_sizes.push_back(
        absl::c_linear_search(dn.inserted_window_dims, d) ? 1 : update_slice_sizes[w++]);
  }
  HLOGYM_ASSIGN(update_window, MakeReshape(update_row, window_sizes));

  auto operand_ds = std::make_unique<Instruction>(
      Opcode::kDynamicSlice, Shape(operand->shape().element_type(), window_sizes));
  operand_ds->AppendOperand(operand);
  for (Instruction* s : start) operand_ds->AppendOperand(s);
  operand_ds->mutable_attrs().dynamic_slice_sizes = window_sizes;
  Instruction* old_window = AddWithLayoutOf(body, std::move(operand_ds), operand);

  auto map = std::make_unique<Instruction>(Opcode::kMap, old_window->shape());
  map->AppendOperand(old_window);
  map->AppendOperand(update_window);
  map->mutable_attrs().dimensions.resize(operand_rank);
  std::iota(map->mutable_attrs().dimensions.begin(), map->mutable_attrs().dimensions.end(), 0);
  map->mutable_attrs().has_dimensions = true;
  map->mutable_called_computations().push_back(scatter.to_apply());
  Instruction* combined = body->AddInstruction(std::move(map));

  // In bounds: 0 <= start[d] <= size[d] - window[d] for every d.
  HLOGYM_ASSIGN(valid, WindowInBounds(dn, components, operand->shape(), window_sizes));
  Instruction* new_window = combined;
  if (valid != nullptr) {
    HLOGYM_ASSIGN(mask, MakeBroadcast(valid, window_sizes, {}));
    HLOGYM_ASSIGN(chosen, MakeSelect(mask, combined, old_window));
    new_window = chosen;
  }
  auto dus = std::make_unique<Instruction>(Opcode::kDynamicUpdateSlice, operand->shape());
  dus->AppendOperand(operand);
  dus->AppendOperand(new_window);
  for (Instruction* s : start) dus->AppendOperand(s);
  Instruction* updated = body->AddInstruction(std::move(dus));
  return std::vector<Instruction*>{updated, indices, updates};
}

absl::StatusOr<Instruction*> Expand(Instruction* scatter) {
  const ScatterDimensionNumbers dn = *scatter->attrs().scatter_dimension_numbers;
  Instruction* operand = scatter->operand(0);
  Instruction* indices = scatter->operand(1);
  Instruction* updates = scatter->operand(2);
  if (updates->shape().ElementCount() == 0) return operand;
  const int64_t trip_count = TripCount(scatter);
  HLOGYM_ASSIGN(canonical_indices, gather_scatter::CanonicalIndices(indices, dn.index_vector_dim,
                                                                    /*always_reshape=*/false));
  HLOGYM_ASSIGN(canonical_updates, CanonicalUpdates(updates, dn.update_window_dims, trip_count));
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
