#include "passes/simplifiers/batch_dot_simplification.h"

#include <vector>

#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/expanders/gather_scatter_utils.h"

namespace hlogym {
namespace {

// The size-1 batch dims of a dot this pass can simplify (empty otherwise).
std::vector<int64_t> DegenerateBatchDims(const Instruction* dot) {
  if (dot->opcode() != Opcode::kDot || dot->operand_count() != 2 ||
      !dot->attrs().dot_dimension_numbers) {
    return {};
  }
  const DotDimensionNumbers& dnums = *dot->attrs().dot_dimension_numbers;
  if (dnums.lhs_batch_dimensions != dnums.rhs_batch_dimensions) return {};
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    if (dnums.lhs_batch_dimensions[i] != static_cast<int64_t>(i)) return {};
  }
  if (dnums.lhs_contracting_dimensions.size() != 1 ||
      dnums.rhs_contracting_dimensions.size() != 1) {
    return {};
  }
  std::vector<int64_t> degenerate;
  for (int64_t d : dnums.lhs_batch_dimensions) {
    if (dot->operand(0)->shape().dimensions(d) == 1) degenerate.push_back(d);
  }
  return degenerate;
}

absl::Status Simplify(Instruction* dot, const std::vector<int64_t>& degenerate) {
  Computation* computation = dot->parent();
  HLOGYM_ASSIGN(lhs, gather_scatter::ElideDegenerateDims(dot->operand(0), degenerate));
  HLOGYM_ASSIGN(rhs, gather_scatter::ElideDegenerateDims(dot->operand(1), degenerate));
  DotDimensionNumbers dnums = *dot->attrs().dot_dimension_numbers;
  const int64_t removed = static_cast<int64_t>(degenerate.size());
  const int64_t kept = static_cast<int64_t>(dnums.lhs_batch_dimensions.size()) - removed;
  dnums.lhs_batch_dimensions.clear();
  dnums.rhs_batch_dimensions.clear();
  for (int64_t i = 0; i < kept; ++i) {
    dnums.lhs_batch_dimensions.push_back(i);
    dnums.rhs_batch_dimensions.push_back(i);
  }
  dnums.lhs_contracting_dimensions[0] -= removed;
  dnums.rhs_contracting_dimensions[0] -= removed;
  HLOGYM_ASSIGN(shape,
                InferDotShape(lhs->shape(), rhs->shape(), dnums, dot->shape().element_type()));
  auto clone = dot->CloneWithNewOperands({lhs, rhs}, "");
  clone->set_shape(shape);
  clone->mutable_shape().clear_layout();
  clone->mutable_attrs().dot_dimension_numbers = dnums;
  Instruction* new_dot = AddWithLayoutOf(computation, std::move(clone), dot);
  HLOGYM_ASSIGN(reshaped, MakeReshape(new_dot, dot->shape().dimensions()));
  // The dot's shape, layout included (as XLA's), so that a bitcast reading it sees the same values.
  reshaped->set_shape(dot->shape());
  return computation->ReplaceInstruction(dot, reshaped);
}

}  // namespace

bool BatchDotSimplification::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kDot, [](const Instruction& dot) {
    return !DegenerateBatchDims(&dot).empty();
  });
}

absl::StatusOr<bool> BatchDotSimplification::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<std::pair<Instruction*, std::vector<int64_t>>> work;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      std::vector<int64_t> degenerate = DegenerateBatchDims(owned.get());
      if (!degenerate.empty()) work.emplace_back(owned.get(), std::move(degenerate));
    }
  }
  for (const auto& [dot, degenerate] : work) {
    HLOGYM_RETURN_IF_ERROR(Simplify(dot, degenerate));
  }
  run.Complete();
  return !work.empty();
}

}  // namespace hlogym
