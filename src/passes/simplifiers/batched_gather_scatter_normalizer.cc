#include "passes/simplifiers/batched_gather_scatter_normalizer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Whether `value` is representable in the integral `type`.
bool FitsIn(int64_t value, PrimitiveType type) {
  const int bits = BitWidth(type);
  if (bits >= 64) return true;
  if (IsSignedIntegralType(type)) return value <= (int64_t{1} << (bits - 1)) - 1;
  return value <= (int64_t{1} << bits) - 1;
}

// XLA's promotion: an integral index type too narrow for `size` becomes s32,
// or s64 when s32 is too narrow as well.
PrimitiveType PromoteForSize(PrimitiveType type, int64_t size) {
  if (!IsIntegralType(type) || FitsIn(size, type)) return type;
  return FitsIn(size, PrimitiveType::kS32) ? PrimitiveType::kS32 : PrimitiveType::kS64;
}

// Prepends one iota per batching dimension to the index vectors.
absl::StatusOr<Instruction*> ConcatBatchIndices(Instruction* indices, int64_t index_vector_dim,
                                                const std::vector<int64_t>& batching_dims) {
  Computation* computation = indices->parent();
  PrimitiveType type = indices->shape().element_type();
  for (int64_t dim : batching_dims) {
    if (dim < 0 || dim >= indices->shape().rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat("batching dimension ", dim, " out of range for ", indices->name()));
    }
    type = PromoteForSize(type, indices->shape().dimensions(dim));
  }
  if (type != indices->shape().element_type()) {
    auto converted = MakeConvert(indices, type);
    if (!converted.ok()) return converted;
    indices = *converted;
  }
  std::vector<int64_t> dims = indices->shape().dimensions();
  if (index_vector_dim == indices->shape().rank()) {
    dims.push_back(1);
    auto reshaped = MakeReshape(indices, dims);
    if (!reshaped.ok()) return reshaped;
    indices = *reshaped;
  }
  if (index_vector_dim < 0 || index_vector_dim >= static_cast<int64_t>(dims.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("index_vector_dim ", index_vector_dim, " out of range for ", indices->name()));
  }
  std::vector<int64_t> iota_dims = dims;
  iota_dims[index_vector_dim] = 1;
  std::vector<Instruction*> pieces;
  for (int64_t dim : batching_dims) {
    auto iota = std::make_unique<Instruction>(Opcode::kIota, Shape(type, iota_dims));
    iota->mutable_attrs().iota_dimension = dim;
    pieces.push_back(AddWithLayoutOf(computation, std::move(iota), indices));
  }
  pieces.push_back(indices);
  return MakeConcatenate(pieces, index_vector_dim);
}

bool Matches(const Instruction* hlo) {
  if (hlo->opcode() == Opcode::kGather) {
    return hlo->attrs().gather_dimension_numbers &&
           !hlo->attrs().gather_dimension_numbers->operand_batching_dims.empty();
  }
  if (hlo->opcode() == Opcode::kScatter) {
    return hlo->attrs().scatter_dimension_numbers &&
           !hlo->attrs().scatter_dimension_numbers->input_batching_dims.empty();
  }
  return false;
}

absl::StatusOr<Instruction*> NormalizeGather(Instruction* gather) {
  const GatherDimensionNumbers& dnums = *gather->attrs().gather_dimension_numbers;
  if (dnums.operand_batching_dims.size() != dnums.start_indices_batching_dims.size() ||
      gather->operand_count() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(gather->name(), ": mismatched gather batching dimensions"));
  }
  auto indices = ConcatBatchIndices(gather->operand(1), dnums.index_vector_dim,
                                    dnums.start_indices_batching_dims);
  if (!indices.ok()) return indices;
  GatherDimensionNumbers updated;
  updated.offset_dims = dnums.offset_dims;
  updated.collapsed_slice_dims = dnums.collapsed_slice_dims;
  updated.collapsed_slice_dims.insert(updated.collapsed_slice_dims.end(),
                                      dnums.operand_batching_dims.begin(),
                                      dnums.operand_batching_dims.end());
  std::sort(updated.collapsed_slice_dims.begin(), updated.collapsed_slice_dims.end());
  updated.start_index_map = dnums.operand_batching_dims;
  updated.start_index_map.insert(updated.start_index_map.end(), dnums.start_index_map.begin(),
                                 dnums.start_index_map.end());
  updated.index_vector_dim = dnums.index_vector_dim;
  auto normalized = std::make_unique<Instruction>(Opcode::kGather, gather->shape());
  normalized->AppendOperand(gather->operand(0));
  normalized->AppendOperand(*indices);
  normalized->mutable_attrs().indices_are_sorted =
      gather->attrs().indices_are_sorted &&
      std::is_sorted(updated.start_index_map.begin(), updated.start_index_map.end());
  normalized->mutable_attrs().gather_dimension_numbers = std::move(updated);
  normalized->mutable_attrs().gather_slice_sizes = gather->attrs().gather_slice_sizes;
  return gather->parent()->AddInstruction(std::move(normalized));
}

absl::StatusOr<Instruction*> NormalizeScatter(Instruction* scatter) {
  const ScatterDimensionNumbers& dnums = *scatter->attrs().scatter_dimension_numbers;
  const int64_t count = scatter->operand_count();
  if (dnums.input_batching_dims.size() != dnums.scatter_indices_batching_dims.size() || count < 3 ||
      count % 2 == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(scatter->name(), ": mismatched scatter batching dimensions or operands"));
  }
  const int64_t n = count / 2;
  auto indices = ConcatBatchIndices(scatter->operand(n), dnums.index_vector_dim,
                                    dnums.scatter_indices_batching_dims);
  if (!indices.ok()) return indices;
  ScatterDimensionNumbers updated;
  updated.update_window_dims = dnums.update_window_dims;
  updated.inserted_window_dims = dnums.inserted_window_dims;
  updated.inserted_window_dims.insert(updated.inserted_window_dims.end(),
                                      dnums.input_batching_dims.begin(),
                                      dnums.input_batching_dims.end());
  std::sort(updated.inserted_window_dims.begin(), updated.inserted_window_dims.end());
  updated.scatter_dims_to_operand_dims = dnums.input_batching_dims;
  updated.scatter_dims_to_operand_dims.insert(updated.scatter_dims_to_operand_dims.end(),
                                              dnums.scatter_dims_to_operand_dims.begin(),
                                              dnums.scatter_dims_to_operand_dims.end());
  updated.index_vector_dim = dnums.index_vector_dim;
  auto normalized = std::make_unique<Instruction>(Opcode::kScatter, scatter->shape());
  for (int64_t i = 0; i < count; ++i) {
    normalized->AppendOperand(i == n ? *indices : scatter->operand(i));
  }
  normalized->mutable_attrs().indices_are_sorted =
      scatter->attrs().indices_are_sorted &&
      std::is_sorted(updated.scatter_dims_to_operand_dims.begin(),
                     updated.scatter_dims_to_operand_dims.end());
  normalized->mutable_attrs().unique_indices = scatter->attrs().unique_indices;
  normalized->mutable_attrs().scatter_dimension_numbers = std::move(updated);
  normalized->mutable_called_computations() = scatter->called_computations();
  return scatter->parent()->AddInstruction(std::move(normalized));
}

absl::StatusOr<Instruction*> Expand(Instruction* hlo) {
  return hlo->opcode() == Opcode::kGather ? NormalizeGather(hlo) : NormalizeScatter(hlo);
}

}  // namespace

bool BatchedGatherScatterNormalizer::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kGather,
                             [](const Instruction& hlo) { return Matches(&hlo); }) ||
         ContainsInstruction(module, Opcode::kScatter,
                             [](const Instruction& hlo) { return Matches(&hlo); });
}

absl::StatusOr<bool> BatchedGatherScatterNormalizer::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Expand);
}

}  // namespace hlogym
