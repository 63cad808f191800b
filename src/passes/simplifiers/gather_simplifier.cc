#include "passes/simplifiers/gather_simplifier.h"

#include <algorithm>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/expanders/gather_scatter_utils.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

using namespace gather_scatter;  // NOLINT

// The canonical form: two-dimensional indices with the index vector last, no
// collapsed slice dimensions, and the offset dimensions right after the batch
// dimension. The start index map may be anything: the operand is not
// transposed (XLA stopped doing that; its gathers keep start_index_map).
bool IsSimplifiedGather(const Instruction* gather) {
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  return gather->operand(1)->shape().rank() == 2 && dnums.index_vector_dim == 1 &&
         dnums.collapsed_slice_dims.empty() && !dnums.offset_dims.empty() &&
         dnums.offset_dims.front() == 1 &&
         dnums.offset_dims.back() == static_cast<int64_t>(dnums.offset_dims.size());
}

bool Matches(const Instruction* hlo) {
  if (hlo->opcode() != Opcode::kGather || !hlo->attrs().gather_dimension_numbers) return false;
  if (!hlo->shape().IsArray() || !hlo->shape().is_static()) return false;
  const GatherDimensionNumbers& dnums = *hlo->attrs().gather_dimension_numbers;
  if (!dnums.operand_batching_dims.empty() || !dnums.start_indices_batching_dims.empty()) {
    return false;
  }
  return !IsSimplifiedGather(hlo);
}

absl::StatusOr<Instruction*> Expand(Instruction* gather) {
  Computation* computation = gather->parent();
  const std::vector<int64_t>& slice_sizes_in = gather->attrs().gather_slice_sizes;
  if (std::find(slice_sizes_in.begin(), slice_sizes_in.end(), 0) != slice_sizes_in.end()) {
    Instruction* zero = MakeScalarConstant(computation, gather->shape().element_type(), 0,
                                           gather->shape().has_layout());
    return MakeBroadcast(zero, gather->shape().dimensions(), {});
  }
  const GatherDimensionNumbers dnums = *gather->attrs().gather_dimension_numbers;
  const int64_t operand_rank =
      static_cast<int64_t>(dnums.collapsed_slice_dims.size() + dnums.offset_dims.size());
  // Every index selects the one element of a scalar operand.
  if (operand_rank == 0) return MakeBroadcast(gather->operand(0), gather->shape().dimensions(), {});

  auto indices = TransformStartIndices(gather->operand(1), dnums.index_vector_dim);
  if (!indices.ok()) return indices;
  std::vector<int64_t> output_dims = {(*indices)->shape().dimensions(0)};
  output_dims.insert(output_dims.end(), slice_sizes_in.begin(), slice_sizes_in.end());
  auto canonical = std::make_unique<Instruction>(
      Opcode::kGather, Shape(gather->operand(0)->shape().element_type(), output_dims));
  canonical->AppendOperand(gather->operand(0));
  canonical->AppendOperand(*indices);
  GatherDimensionNumbers new_dnums;
  for (int64_t i = 1; i <= operand_rank; ++i) new_dnums.offset_dims.push_back(i);
  new_dnums.start_index_map = dnums.start_index_map;
  new_dnums.index_vector_dim = 1;
  canonical->mutable_attrs().gather_dimension_numbers = new_dnums;
  canonical->mutable_attrs().gather_slice_sizes = slice_sizes_in;
  canonical->mutable_attrs().indices_are_sorted = gather->attrs().indices_are_sorted;
  Instruction* result = AddWithLayoutOf(computation, std::move(canonical), gather);

  if (!dnums.collapsed_slice_dims.empty()) {
    std::vector<int64_t> collapsed;
    for (int64_t d : dnums.collapsed_slice_dims) collapsed.push_back(d + 1);
    HLOGYM_ASSIGN(elided, ElideDegenerateDims(result, collapsed));
    result = elided;
  }

  std::vector<int64_t> batch_dims;
  const std::vector<int64_t>& index_dims = gather->operand(1)->shape().dimensions();
  for (int64_t i = 0; i < static_cast<int64_t>(index_dims.size()); ++i) {
    if (i != dnums.index_vector_dim) batch_dims.push_back(index_dims[i]);
  }
  // One batch dimension is already the canonical gather's first.
  if (batch_dims.size() > 1) {
    HLOGYM_ASSIGN(expanded, ExpandFirstDimIntoNDims(result, batch_dims));
    result = expanded;
  } else if (batch_dims.empty()) {
    const int64_t first[] = {0};
    HLOGYM_ASSIGN(elided, ElideDegenerateDims(result, first));
    result = elided;
  }

  // Move the offset dimensions where the original gather had them.
  const int64_t output_rank = static_cast<int64_t>(batch_dims.size() + dnums.offset_dims.size());
  std::vector<int64_t> final_permutation;
  int64_t next_offset = static_cast<int64_t>(batch_dims.size());
  int64_t next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    bool is_offset =
        std::find(dnums.offset_dims.begin(), dnums.offset_dims.end(), i) != dnums.offset_dims.end();
    final_permutation.push_back(is_offset ? next_offset++ : next_batch++);
  }
  return MaybeTranspose(result, final_permutation);
}

}  // namespace

absl::StatusOr<bool> GatherSimplifier::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Expand);
}

bool GatherSimplifier::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kGather,
                             [](const Instruction& gather) { return Matches(&gather); });
}

}  // namespace hlogym
