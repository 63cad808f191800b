#include "passes/simplifiers/topk_splitter.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

constexpr int64_t kAlignment = 1024;
constexpr int64_t kMaxRows = 1024;

struct Split {
  int64_t n = 0;
  int64_t k = 0;
  int64_t rows = 0;
};

// The split for `topk`, or nullopt when it is not one to split.
std::optional<Split> PlanSplit(const Instruction* topk, int64_t threshold) {
  if (topk->opcode() != Opcode::kCustomCall || topk->attrs().custom_call_target != "TopK" ||
      topk->operand_count() != 1) {
    return std::nullopt;
  }
  const Shape& data = topk->operand(0)->shape();
  const Shape& shape = topk->shape();
  if (!data.IsArray() || (data.rank() != 1 && data.rank() != 2) || !shape.IsTuple() ||
      shape.tuple_shapes_size() != 2) {
    return std::nullopt;
  }
  const Shape& values = shape.tuple_shapes(0);
  const Shape& indices = shape.tuple_shapes(1);
  if (!values.IsArray() || !indices.IsArray() || values.rank() != data.rank() ||
      indices.dimensions() != values.dimensions() || values.element_type() != data.element_type() ||
      indices.element_type() != PrimitiveType::kS32) {
    return std::nullopt;
  }
  const bool batched = data.rank() == 2;
  if (batched && (data.dimensions(0) != 1 || values.dimensions(0) != 1)) return std::nullopt;
  Split split;
  split.n = data.dimensions(data.rank() - 1);
  split.k = values.dimensions(values.rank() - 1);
  if (threshold <= 0 || split.k < 0 || split.k * split.k > split.n || split.n % kAlignment != 0 ||
      split.n < threshold) {
    return std::nullopt;
  }
  split.rows = std::min<int64_t>(
      static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(split.n / threshold))), kMaxRows);
  if (split.rows <= 1) return std::nullopt;
  return split;
}

absl::StatusOr<Instruction*> Rewrite(Instruction* topk, const Split& split) {
  Computation* computation = topk->parent();
  Instruction* input = topk->operand(0);
  const PrimitiveType type = input->shape().element_type();
  const int64_t columns = split.n / split.rows;
  HLOGYM_ASSIGN(reshaped, MakeReshape(input, std::vector<int64_t>{split.rows, columns}));
  const std::vector<int64_t> row_dims = {split.rows, split.k};
  auto call = std::make_unique<Instruction>(
      Opcode::kCustomCall,
      Shape::Tuple({Shape(type, row_dims), Shape(PrimitiveType::kS32, row_dims)}));
  call->AppendOperand(reshaped);
  call->mutable_attrs().custom_call_target = "TopK";
  call->mutable_called_computations() = topk->called_computations();
  Instruction* rows_topk = AddWithLayoutOf(computation, std::move(call), input);
  HLOGYM_ASSIGN(values, MakeGetTupleElement(rows_topk, 0));
  HLOGYM_ASSIGN(indices, MakeGetTupleElement(rows_topk, 1));
  // Row r's indices count from r * columns in the original input.
  auto iota_instruction =
      std::make_unique<Instruction>(Opcode::kIota, Shape(PrimitiveType::kS32, {split.rows}));
  iota_instruction->mutable_attrs().iota_dimension = 0;
  Instruction* iota = AddWithLayoutOf(computation, std::move(iota_instruction), input);
  Instruction* width = MakeScalarConstant(
      computation, PrimitiveType::kS32, static_cast<double>(columns), input->shape().has_layout());
  HLOGYM_ASSIGN(widths, MakeBroadcast(width, std::vector<int64_t>{split.rows}, {}));
  HLOGYM_ASSIGN(offsets, MakeBinary(Opcode::kMultiply, iota, widths));
  HLOGYM_ASSIGN(offsets_2d, MakeBroadcast(offsets, row_dims, std::vector<int64_t>{0}));
  HLOGYM_ASSIGN(shifted, MakeBinary(Opcode::kAdd, indices, offsets_2d));
  const std::vector<int64_t> flat = {split.rows * split.k};
  HLOGYM_ASSIGN(flat_values, MakeReshape(values, flat));
  HLOGYM_ASSIGN(flat_indices, MakeReshape(shifted, flat));
  auto sort = std::make_unique<Instruction>(
      Opcode::kSort, Shape::Tuple({Shape(type, flat), Shape(PrimitiveType::kS32, flat)}));
  sort->AppendOperand(flat_values);
  sort->AppendOperand(flat_indices);
  sort->mutable_attrs().dimensions = {0};
  sort->mutable_attrs().is_stable = true;
  sort->mutable_called_computations() = {topk->to_apply()};
  Instruction* sorted = AddWithLayoutOf(computation, std::move(sort), input);
  std::vector<Instruction*> outputs;
  for (int64_t i = 0; i < 2; ++i) {
    HLOGYM_ASSIGN(element, MakeGetTupleElement(sorted, i));
    HLOGYM_ASSIGN(head, MakeSlice(element, std::vector<SliceDimension>{{0, split.k, 1}}));
    HLOGYM_ASSIGN(shaped, MakeReshape(head, topk->shape().tuple_shapes(i).dimensions()));
    outputs.push_back(shaped);
  }
  return MakeTuple(computation, outputs);
}

}  // namespace

absl::StatusOr<bool> TopkSplitter::Run(Module& module) {
  std::vector<std::pair<Instruction*, Split>> work;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      std::optional<Split> split = PlanSplit(instruction.get(), split_threshold_);
      if (!split.has_value()) continue;
      const Computation* comparator = instruction->to_apply();
      if (comparator == nullptr || comparator->num_parameters() != 4) {
        return absl::InvalidArgumentError(
            absl::StrCat("topk-splitter: ", instruction->name(),
                         ": TopK custom call needs a 4-parameter comparator (values and indices)"));
      }
      work.emplace_back(instruction.get(), *split);
    }
  }
  for (const auto& [topk, split] : work) {
    HLOGYM_ASSIGN(replacement, Rewrite(topk, split));
    HLOGYM_RETURN_IF_ERROR(topk->parent()->ReplaceInstruction(topk, replacement));
  }
  return !work.empty();
}

bool TopkSplitter::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kCustomCall});
}

}  // namespace hlogym
