#include "passes/expanders/dot_decomposer.h"

#include <algorithm>
#include <vector>

#include "absl/algorithm/container.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

bool IsCanonicalSide(const Shape& shape, const std::vector<int64_t>& contracting,
                     const std::vector<int64_t>& batch) {
  if (contracting.size() != 1) return false;
  if (static_cast<int64_t>(batch.size()) + 2 < shape.rank()) return false;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool NeedsDecomposition(const Instruction* dot) {
  if (dot->opcode() != Opcode::kDot || dot->operand_count() != 2 ||
      !dot->attrs().dot_dimension_numbers) {
    return false;
  }
  if (!dot->shape().is_static() || !dot->operand(0)->shape().is_static() ||
      !dot->operand(1)->shape().is_static()) {
    return false;
  }
  const DotDimensionNumbers& dnums = *dot->attrs().dot_dimension_numbers;
  return !IsCanonicalSide(dot->operand(0)->shape(), dnums.lhs_contracting_dimensions,
                          dnums.lhs_batch_dimensions) ||
         !IsCanonicalSide(dot->operand(1)->shape(), dnums.rhs_contracting_dimensions,
                          dnums.rhs_batch_dimensions);
}

// Transposes and reshapes `operand` to [batch..., (N,) K] when
// `contracting_last`, else [batch..., K (, N)]; returns it and sets the
// canonical contracting dimension.
absl::StatusOr<Instruction*> CanonicalizeOperand(Instruction* operand,
                                                 const std::vector<int64_t>& batch,
                                                 const std::vector<int64_t>& contracting,
                                                 bool contracting_last,
                                                 int64_t* canonical_contracting) {
  const Shape& shape = operand->shape();
  std::vector<int64_t> non_contracting;
  int64_t contracting_size = 1;
  int64_t non_contracting_size = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (absl::c_linear_search(contracting, i)) {
      contracting_size *= shape.dimensions(i);
    } else if (!absl::c_linear_search(batch, i)) {
      non_contracting.push_back(i);
      non_contracting_size *= shape.dimensions(i);
    }
  }
  std::vector<int64_t> permutation = batch;
  const std::vector<int64_t>& first = contracting_last ? non_contracting : contracting;
  const std::vector<int64_t>& second = contracting_last ? contracting : non_contracting;
  permutation.insert(permutation.end(), first.begin(), first.end());
  permutation.insert(permutation.end(), second.begin(), second.end());
  auto transposed = MakeTranspose(operand, permutation);
  if (!transposed.ok()) return transposed;

  std::vector<int64_t> dims;
  for (int64_t b : batch) dims.push_back(shape.dimensions(b));
  const int64_t b = static_cast<int64_t>(batch.size());
  if (contracting_last) {
    *canonical_contracting = b + (non_contracting_size != 1 ? 1 : 0);
    if (non_contracting_size != 1) dims.push_back(non_contracting_size);
    dims.push_back(contracting_size);
  } else {
    *canonical_contracting = b;
    dims.push_back(contracting_size);
    if (non_contracting_size != 1) dims.push_back(non_contracting_size);
  }
  return MakeReshape(*transposed, dims);
}

absl::Status Decompose(Instruction* dot) {
  Computation* computation = dot->parent();
  const DotDimensionNumbers dnums = *dot->attrs().dot_dimension_numbers;
  DotDimensionNumbers canonical;
  for (int64_t i = 0; i < static_cast<int64_t>(dnums.lhs_batch_dimensions.size()); ++i) {
    canonical.lhs_batch_dimensions.push_back(i);
    canonical.rhs_batch_dimensions.push_back(i);
  }
  int64_t lhs_contracting = 0;
  int64_t rhs_contracting = 0;
  HLOGYM_ASSIGN(lhs, CanonicalizeOperand(dot->operand(0), dnums.lhs_batch_dimensions,
                                         dnums.lhs_contracting_dimensions, true, &lhs_contracting));
  HLOGYM_ASSIGN(rhs,
                CanonicalizeOperand(dot->operand(1), dnums.rhs_batch_dimensions,
                                    dnums.rhs_contracting_dimensions, false, &rhs_contracting));
  canonical.lhs_contracting_dimensions = {lhs_contracting};
  canonical.rhs_contracting_dimensions = {rhs_contracting};
  HLOGYM_ASSIGN(shape,
                InferDotShape(lhs->shape(), rhs->shape(), canonical, dot->shape().element_type()));
  auto clone = dot->CloneWithNewOperands({lhs, rhs}, "");
  clone->set_shape(shape);
  clone->mutable_shape().clear_layout();
  clone->mutable_attrs().dot_dimension_numbers = canonical;
  Instruction* new_dot = AddWithLayoutOf(computation, std::move(clone), dot);

  auto reshape = std::make_unique<Instruction>(Opcode::kReshape, dot->shape());
  reshape->AppendOperand(new_dot);
  Instruction* replacement = computation->AddInstruction(std::move(reshape));
  for (Instruction* predecessor : dot->control_predecessors()) {
    predecessor->AddControlDependencyTo(replacement);
  }
  for (Instruction* successor : dot->control_successors()) {
    replacement->AddControlDependencyTo(successor);
  }
  return computation->ReplaceInstruction(dot, replacement);
}

}  // namespace

absl::StatusOr<bool> DotDecomposer::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Instruction*> dots;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      if (NeedsDecomposition(owned.get())) dots.push_back(owned.get());
    }
  }
  for (Instruction* dot : dots) {
    HLOGYM_RETURN_IF_ERROR(Decompose(dot));
  }
  run.Complete();
  return !dots.empty();
}

bool DotDecomposer::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kDot,
                             [](const Instruction& dot) { return NeedsDecomposition(&dot); });
}

}  // namespace hlogym
