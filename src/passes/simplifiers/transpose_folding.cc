#include "passes/simplifiers/transpose_folding.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

bool IsNonIdentityTranspose(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kTranspose && !IsIdentityPermutation(hlo->attrs().dimensions);
}

// XLA's IsRowColumnTransposeDotOperand.
bool IsRowColumnTransposeOperand(const Instruction* dot, int64_t index) {
  const Instruction* transpose = dot->operand(index);
  const DotDimensionNumbers& dnums = *dot->attrs().dot_dimension_numbers;
  const std::vector<int64_t>& batch =
      index == 0 ? dnums.lhs_batch_dimensions : dnums.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting =
      index == 0 ? dnums.lhs_contracting_dimensions : dnums.rhs_contracting_dimensions;
  if (static_cast<int64_t>(batch.size()) != transpose->shape().rank() - 2) return false;
  if (contracting.size() != 1) return false;
  for (int64_t d : batch) {
    if (transpose->attrs().dimensions[d] != d) return false;
  }
  return true;
}

void MapThrough(std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  for (int64_t& d : dims) d = perm[d];
}

struct Fold {
  Instruction* dot;
  bool lhs = false;
  bool rhs = false;
};

}  // namespace

absl::StatusOr<bool> TransposeFolding::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Fold> folds;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      Instruction* dot = owned.get();
      if (dot->opcode() != Opcode::kDot || !dot->attrs().dot_dimension_numbers) continue;
      if (dot->operand(0)->shape().rank() < 2 || dot->operand(1)->shape().rank() < 2) continue;
      Fold fold{dot};
      fold.lhs = IsNonIdentityTranspose(dot->operand(0)) && IsRowColumnTransposeOperand(dot, 0);
      fold.rhs = IsNonIdentityTranspose(dot->operand(1)) && IsRowColumnTransposeOperand(dot, 1);
      if (fold.lhs || fold.rhs) folds.push_back(fold);
    }
  }
  for (const Fold& fold : folds) {
    Instruction* dot = fold.dot;
    Computation* computation = dot->parent();
    DotDimensionNumbers dnums = *dot->attrs().dot_dimension_numbers;
    Instruction* lhs = dot->operand(0);
    Instruction* rhs = dot->operand(1);
    if (fold.lhs) {
      MapThrough(dnums.lhs_contracting_dimensions, lhs->attrs().dimensions);
      MapThrough(dnums.lhs_batch_dimensions, lhs->attrs().dimensions);
      lhs = lhs->operand(0);
    }
    if (fold.rhs) {
      MapThrough(dnums.rhs_contracting_dimensions, rhs->attrs().dimensions);
      MapThrough(dnums.rhs_batch_dimensions, rhs->attrs().dimensions);
      rhs = rhs->operand(0);
    }
    std::vector<Instruction*> operands = dot->operands();
    operands[0] = lhs;
    operands[1] = rhs;
    auto clone = dot->CloneWithNewOperands(operands, module.UniqueName(dot->name()));
    clone->mutable_attrs().dot_dimension_numbers = dnums;
    Instruction* folded = computation->AddInstruction(std::move(clone));
    for (Instruction* predecessor : dot->control_predecessors()) {
      predecessor->AddControlDependencyTo(folded);
    }
    for (Instruction* successor : dot->control_successors()) {
      folded->AddControlDependencyTo(successor);
    }
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(dot, folded));
  }
  run.Complete();
  return !folds.empty();
}

bool TransposeFolding::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDot}) && ContainsOpcode(module, {Opcode::kTranspose});
}

}  // namespace hlogym
