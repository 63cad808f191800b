#include "passes/simplifiers/dot_merger.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {
namespace {

const DotDimensionNumbers& Dnums(const Instruction* dot) {
  return *dot->attrs().dot_dimension_numbers;
}

// Whether `to` depends (through operands or control edges) on `from`.
bool Reaches(const Instruction* from, const Instruction* to) {
  std::vector<const Instruction*> stack = {to};
  absl::flat_hash_set<const Instruction*> seen = {to};
  while (!stack.empty()) {
    const Instruction* current = stack.back();
    stack.pop_back();
    if (current == from) return true;
    auto visit = [&](const Instruction* next) {
      if (seen.insert(next).second) stack.push_back(next);
    };
    for (const Instruction* operand : current->operands()) visit(operand);
    for (const Instruction* pred : current->control_predecessors()) visit(pred);
  }
  return false;
}

absl::StatusOr<Instruction*> Slice(Instruction* operand, std::vector<SliceDimension> slice) {
  return MakeSlice(operand, slice);
}

std::vector<SliceDimension> FullSlice(const Shape& shape) {
  std::vector<SliceDimension> slice;
  for (int64_t d : shape.dimensions()) slice.push_back({0, d, 1});
  return slice;
}

absl::StatusOr<Instruction*> NewDot(Instruction* like, Instruction* lhs, Instruction* rhs,
                                    const DotDimensionNumbers& dnums) {
  HLOGYM_ASSIGN(shape,
                InferDotShape(lhs->shape(), rhs->shape(), dnums, like->shape().element_type()));
  auto clone = like->CloneWithNewOperands({lhs, rhs}, "");
  clone->set_shape(shape);
  clone->mutable_shape().clear_layout();
  clone->mutable_attrs().dot_dimension_numbers = dnums;
  return AddWithLayoutOf(like->parent(), std::move(clone), like);
}

// Where two dots that share an operand would be merged: found before anything is built, so that
// pairs that cannot merge cost no reachability walk.
struct SameOperandMerge {
  bool lhs_same = false;
  Instruction* shared = nullptr;
  Instruction* diff_a = nullptr;
  Instruction* diff_b = nullptr;
  int64_t shared_non_contracting = 0;
  int64_t outer = 0;  // the concatenate's dimension
};

std::optional<SameOperandMerge> PlanSameOperand(Instruction* a, Instruction* b) {
  if (a->operand(0) != b->operand(0) && a->operand(1) != b->operand(1)) return std::nullopt;
  if (a->operand(0)->shape().element_type() != b->operand(0)->shape().element_type() ||
      a->operand(1)->shape().element_type() != b->operand(1)->shape().element_type() ||
      a->shape().element_type() != b->shape().element_type()) {
    return std::nullopt;
  }
  const DotDimensionNumbers& dnums = Dnums(a);
  if (!(dnums == Dnums(b))) return std::nullopt;
  SameOperandMerge plan;
  plan.lhs_same = a->operand(0) == b->operand(0);
  plan.shared = a->operand(plan.lhs_same ? 0 : 1);
  plan.diff_a = a->operand(plan.lhs_same ? 1 : 0);
  plan.diff_b = b->operand(plan.lhs_same ? 1 : 0);
  if (plan.diff_a->shape().layout() != plan.diff_b->shape().layout()) return std::nullopt;
  plan.shared_non_contracting =
      plan.shared->shape().rank() - static_cast<int64_t>(dnums.lhs_batch_dimensions.size());
  std::set<int64_t> used;
  if (plan.lhs_same) {
    plan.shared_non_contracting -= static_cast<int64_t>(dnums.lhs_contracting_dimensions.size());
    used.insert(dnums.rhs_contracting_dimensions.begin(), dnums.rhs_contracting_dimensions.end());
    used.insert(dnums.rhs_batch_dimensions.begin(), dnums.rhs_batch_dimensions.end());
  } else {
    plan.shared_non_contracting -= static_cast<int64_t>(dnums.rhs_contracting_dimensions.size());
    used.insert(dnums.lhs_contracting_dimensions.begin(), dnums.lhs_contracting_dimensions.end());
    used.insert(dnums.lhs_batch_dimensions.begin(), dnums.lhs_batch_dimensions.end());
  }
  if (static_cast<int64_t>(used.size()) + 1 != plan.diff_a->shape().rank()) return std::nullopt;
  for (int64_t d : used) {
    if (d != plan.outer) break;
    ++plan.outer;
  }
  return plan;
}

absl::StatusOr<Instruction*> MergeSameOperand(Instruction* a, Instruction* b,
                                              const SameOperandMerge& plan) {
  Instruction* pieces[] = {plan.diff_a, plan.diff_b};
  auto concat = MakeConcatenate(pieces, plan.outer);
  if (!concat.ok()) return concat;
  auto merged = NewDot(a, plan.lhs_same ? plan.shared : *concat,
                       plan.lhs_same ? *concat : plan.shared, Dnums(a));
  if (!merged.ok()) return merged;
  const int64_t rank = (*merged)->shape().rank();
  const int64_t slice_dim = rank - (plan.lhs_same ? 1 : 1 + plan.shared_non_contracting);
  std::vector<SliceDimension> slice = FullSlice((*merged)->shape());
  slice[slice_dim].limit = a->shape().dimensions(slice_dim);
  auto new_a = Slice(*merged, slice);
  if (!new_a.ok()) return new_a;
  slice[slice_dim].start = slice[slice_dim].limit;
  slice[slice_dim].limit = (*merged)->shape().dimensions(slice_dim);
  auto new_b = Slice(*merged, slice);
  if (!new_b.ok()) return new_b;
  HLOGYM_RETURN_IF_ERROR(a->ReplaceAllUsesWith(*new_a));
  HLOGYM_RETURN_IF_ERROR(b->ReplaceAllUsesWith(*new_b));
  return merged;
}

bool IsTransposeOf(const Instruction* t, const Instruction* x) {
  return t->opcode() == Opcode::kTranspose && t->operand(0) == x &&
         t->attrs().dimensions == std::vector<int64_t>{1, 0};
}

bool IsCanonicalMatmul(const Instruction* dot) {
  const DotDimensionNumbers& dnums = Dnums(dot);
  return dot->operand(0)->shape().rank() == 2 && dot->operand(1)->shape().rank() == 2 &&
         dnums.lhs_contracting_dimensions == std::vector<int64_t>{1} &&
         dnums.rhs_contracting_dimensions == std::vector<int64_t>{0};
}

// Whether canonical matmuls a = x.y and b = w.x^T (b's rhs the transpose of a's lhs, or the other
// way) would merge as one dot x.concat(y, w^T), from which b is read back transposed.
bool LhsWithRhsApplies(const Instruction* a, const Instruction* b) {
  for (const Instruction* dot : {a, b}) {
    if (!Dnums(dot).lhs_batch_dimensions.empty() || !Dnums(dot).rhs_batch_dimensions.empty()) {
      return false;
    }
    if (!IsCanonicalMatmul(dot)) return false;
  }
  const Instruction* a_lhs = a->operand(0);
  const Instruction* b_rhs = b->operand(1);
  if (a->shape().element_type() != b->shape().element_type() ||
      a->operand(1)->shape().element_type() != b->operand(0)->shape().element_type()) {
    return false;
  }
  if (a->shape().dimensions(0) != b->shape().dimensions(1)) return false;
  return IsTransposeOf(a_lhs, b_rhs) || IsTransposeOf(b_rhs, a_lhs);
}

absl::StatusOr<Instruction*> MergeLhsWithRhs(Instruction* a, Instruction* b) {
  Instruction* a_lhs = a->operand(0);
  Instruction* a_rhs = a->operand(1);
  Instruction* b_lhs = b->operand(0);
  const int64_t swap[] = {1, 0};
  auto b_lhs_t = MakeTranspose(b_lhs, swap);
  if (!b_lhs_t.ok()) return b_lhs_t;
  Instruction* pieces[] = {a_rhs, *b_lhs_t};
  auto concat = MakeConcatenate(pieces, 1);
  if (!concat.ok()) return concat;
  auto merged = NewDot(a, a_lhs, *concat, Dnums(a));
  if (!merged.ok()) return merged;
  const int64_t m = a->shape().dimensions(0);
  const int64_t n_a = a->shape().dimensions(1);
  const int64_t n_b = b->shape().dimensions(0);
  auto new_a = Slice(*merged, {{0, m, 1}, {0, n_a, 1}});
  if (!new_a.ok()) return new_a;
  auto b_slice = Slice(*merged, {{0, b->shape().dimensions(1), 1}, {n_a, n_a + n_b, 1}});
  if (!b_slice.ok()) return b_slice;
  auto new_b = MakeTranspose(*b_slice, swap);
  if (!new_b.ok()) return new_b;
  HLOGYM_RETURN_IF_ERROR(a->ReplaceAllUsesWith(*new_a));
  HLOGYM_RETURN_IF_ERROR(b->ReplaceAllUsesWith(*new_b));
  return merged;
}

// The merged dot, or nullptr when a and b do not merge. The checks on the two dots come first;
// the walk for a path between them (merging would make a cycle) only for pairs that pass them.
absl::StatusOr<Instruction*> TryMerge(Instruction* a, Instruction* b) {
  if (a->shape().layout() != b->shape().layout()) return nullptr;
  if (a->attrs().operand_precision != b->attrs().operand_precision) return nullptr;
  const std::optional<SameOperandMerge> same_operand = PlanSameOperand(a, b);
  const bool a_lhs_with_b_rhs = !same_operand && LhsWithRhsApplies(a, b);
  const bool b_lhs_with_a_rhs = !same_operand && !a_lhs_with_b_rhs && LhsWithRhsApplies(b, a);
  if (!same_operand && !a_lhs_with_b_rhs && !b_lhs_with_a_rhs) return nullptr;
  if (Reaches(a, b) || Reaches(b, a)) return nullptr;
  if (same_operand) return MergeSameOperand(a, b, *same_operand);
  return a_lhs_with_b_rhs ? MergeLhsWithRhs(a, b) : MergeLhsWithRhs(b, a);
}

bool IsMergeableDot(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kDot && hlo->operand_count() == 2 &&
         hlo->attrs().dot_dimension_numbers && hlo->control_predecessors().empty() &&
         hlo->control_successors().empty() && hlo->shape().IsArray();
}

}  // namespace

absl::StatusOr<bool> DotMerger::Run(Module& module) {
  bool changed = false;
  auto small_enough = [&](const Instruction* hlo) {
    int64_t bytes = hlo->shape().ByteSize();
    for (const Instruction* operand : hlo->operands()) bytes += operand->shape().ByteSize();
    return bytes <= max_size_to_merge_;
  };
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    // Shared operand (by unique id) -> dots using it (by unique id).
    std::map<int64_t, std::vector<Instruction*>> classes;
    for (const auto& hlo : computation->instructions()) {
      if (!IsMergeableDot(hlo.get())) continue;
      for (Instruction* operand : hlo->operands()) {
        classes[operand->unique_id()].push_back(hlo.get());
        if (operand->opcode() == Opcode::kTranspose) {
          classes[operand->operand(0)->unique_id()].push_back(hlo.get());
        }
      }
    }
    std::vector<Instruction*> dead;
    absl::flat_hash_set<const Instruction*> dead_set;
    for (auto& [key, members] : classes) {
      std::sort(members.begin(), members.end(), [](const Instruction* x, const Instruction* y) {
        return x->unique_id() < y->unique_id();
      });
      members.erase(std::unique(members.begin(), members.end()), members.end());
      if (members.size() < 2 || std::none_of(members.begin(), members.end(), small_enough)) {
        continue;
      }
      std::vector<Instruction*> dots = members;
      for (size_t i = 0; i < dots.size(); ++i) {
        if (dots[i] == nullptr) continue;
        for (size_t j = i + 1; j < dots.size(); ++j) {
          Instruction* a = dots[i];
          Instruction* b = dots[j];
          if (b == nullptr) continue;
          if (dead_set.contains(a) || dead_set.contains(b)) continue;
          if (!small_enough(a) && !small_enough(b)) continue;
          HLOGYM_ASSIGN(merged, TryMerge(a, b));
          if (merged == nullptr) continue;
          dead.push_back(a);
          dead.push_back(b);
          dead_set.insert(a);
          dead_set.insert(b);
          dots[i] = merged;
          dots[j] = nullptr;
        }
      }
    }
    for (Instruction* hlo : dead) {
      HLOGYM_RETURN_IF_ERROR(computation->RemoveInstruction(hlo));
    }
    changed |= !dead.empty();
  }
  return changed;
}

bool DotMerger::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDot});
}

}  // namespace hlogym
