#include "passes/simplifiers/scatter_simplifier.h"

#include <algorithm>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "hlo/query.h"
#include "passes/builders.h"
#include "passes/expanders/gather_scatter_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

using namespace gather_scatter;  // NOLINT

// Operands are (operands..., indices, updates...): n of each array.
int64_t ScatterArity(const Instruction* scatter) { return (scatter->operand_count() - 1) / 2; }

bool IsSimplifiedScatter(const Instruction* scatter) {
  const ScatterDimensionNumbers& dnums = *scatter->attrs().scatter_dimension_numbers;
  const int64_t n = ScatterArity(scatter);
  if (scatter->operand(0)->shape().rank() == 0) return false;
  const Shape& indices = scatter->operand(n)->shape();
  const Shape& update = scatter->operand(n + 1)->shape();
  const int64_t scatter_dims =
      update.rank() - static_cast<int64_t>(dnums.update_window_dims.size());
  return dnums.index_vector_dim + 1 == indices.rank() && scatter_dims <= 1 &&
         !absl::c_linear_search(dnums.update_window_dims, 0) &&
         std::is_sorted(dnums.update_window_dims.begin(), dnums.update_window_dims.end()) &&
         dnums.inserted_window_dims.empty();
}

bool Matches(const Instruction* hlo) {
  if (hlo->opcode() != Opcode::kScatter || !hlo->attrs().scatter_dimension_numbers) return false;
  if (hlo->operand_count() < 3 || hlo->operand_count() % 2 == 0) return false;
  if (hlo->called_computations().size() != 1 || !hlo->shape().is_static()) return false;
  const ScatterDimensionNumbers& dnums = *hlo->attrs().scatter_dimension_numbers;
  if (!dnums.input_batching_dims.empty() || !dnums.scatter_indices_batching_dims.empty()) {
    return false;
  }
  if (IsSimplifiedScatter(hlo)) return false;
  const int64_t n = ScatterArity(hlo);
  if (hlo->operand(0)->shape().rank() == 0) {
    for (int64_t i = 0; i < n; ++i) {
      if (!hlo->operand(n + 1 + i)->shape().IsScalar()) return false;
    }
  }
  return true;
}

// The combiner applied to (operands..., updates...), copied into the
// scatter's computation; returns the copy of its root.
absl::StatusOr<Instruction*> InlineCombiner(Instruction* scatter) {
  Computation* computation = scatter->parent();
  const Computation* combiner = scatter->to_apply();
  const int64_t n = ScatterArity(scatter);
  absl::flat_hash_map<const Instruction*, Instruction*> mapped;
  for (int64_t i = 0; i < n; ++i) {
    mapped[combiner->parameter_instruction(i)] = scatter->operand(i);
    mapped[combiner->parameter_instruction(n + i)] = scatter->operand(n + 1 + i);
  }
  for (Instruction* original : combiner->MakeInstructionPostOrder()) {
    if (original->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : original->operands()) operands.push_back(mapped.at(operand));
    auto clone = original->CloneWithNewOperands(operands, "");
    mapped[original] = AddWithLayoutOf(computation, std::move(clone), scatter);
  }
  return mapped.at(combiner->root_instruction());
}

absl::StatusOr<Instruction*> FlattenUpdate(Instruction* update,
                                           const ScatterDimensionNumbers& dnums) {
  const int64_t rank = update->shape().rank();
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < rank; ++i) {
    if (!absl::c_linear_search(dnums.update_window_dims, i)) permutation.push_back(i);
  }
  const int64_t scatter_dims = static_cast<int64_t>(permutation.size());
  permutation.insert(permutation.end(), dnums.update_window_dims.begin(),
                     dnums.update_window_dims.end());
  auto made = MaybeTranspose(update, permutation);
  if (!made.ok()) return made;
  if (scatter_dims > 1) {
    made = CollapseFirstNDims(*made, scatter_dims);
  } else if (scatter_dims == 0) {
    const int64_t first[] = {0};
    made = InsertDegenerateDims(*made, first);
  }
  if (!made.ok()) return made;
  if (!dnums.inserted_window_dims.empty()) {
    std::vector<int64_t> positions;
    for (int64_t d : dnums.inserted_window_dims) positions.push_back(d + 1);
    std::sort(positions.begin(), positions.end());
    made = InsertDegenerateDims(*made, positions);
  }
  return made;
}

absl::StatusOr<Instruction*> Expand(Instruction* scatter) {
  if (scatter->operand(0)->shape().rank() == 0) return InlineCombiner(scatter);
  Computation* computation = scatter->parent();
  const ScatterDimensionNumbers dnums = *scatter->attrs().scatter_dimension_numbers;
  const int64_t n = ScatterArity(scatter);
  const int64_t operand_rank =
      static_cast<int64_t>(dnums.update_window_dims.size() + dnums.inserted_window_dims.size());
  auto indices = TransformStartIndices(scatter->operand(n), dnums.index_vector_dim);
  if (!indices.ok()) return indices;
  std::vector<Instruction*> updates;
  for (int64_t i = 0; i < n; ++i) {
    auto update = FlattenUpdate(scatter->operand(n + 1 + i), dnums);
    if (!update.ok()) return update;
    updates.push_back(*update);
  }
  auto simplified = std::make_unique<Instruction>(Opcode::kScatter, scatter->shape());
  simplified->mutable_shape().clear_layout();
  for (int64_t i = 0; i < n; ++i) simplified->AppendOperand(scatter->operand(i));
  simplified->AppendOperand(*indices);
  for (Instruction* update : updates) simplified->AppendOperand(update);
  ScatterDimensionNumbers new_dnums;
  for (int64_t i = 1; i <= operand_rank; ++i) new_dnums.update_window_dims.push_back(i);
  new_dnums.scatter_dims_to_operand_dims = dnums.scatter_dims_to_operand_dims;
  new_dnums.index_vector_dim = 1;
  simplified->mutable_attrs().scatter_dimension_numbers = new_dnums;
  simplified->mutable_attrs().indices_are_sorted = scatter->attrs().indices_are_sorted;
  simplified->mutable_attrs().unique_indices = scatter->attrs().unique_indices;
  simplified->mutable_called_computations() = scatter->called_computations();
  return AddWithLayoutOf(computation, std::move(simplified), scatter);
}

}  // namespace

absl::StatusOr<bool> ScatterSimplifier::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Expand);
}

bool ScatterSimplifier::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kScatter,
                             [](const Instruction& scatter) { return Matches(&scatter); });
}

}  // namespace hlogym
