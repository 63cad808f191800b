#include "passes/simplifiers/dot_dimension_sorter.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// Distinct numbers that form a range once sorted.
bool Consecutive(const std::vector<int64_t>& dims) {
  if (dims.empty()) return true;
  auto [lo, hi] = std::minmax_element(dims.begin(), dims.end());
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() &&
         *hi - *lo == static_cast<int64_t>(dims.size()) - 1;
}

bool NeedsSorting(const DotDimensionNumbers& dnums) {
  const auto& lhs = dnums.lhs_contracting_dimensions;
  const auto& rhs = dnums.rhs_contracting_dimensions;
  if (lhs.empty()) return false;
  const bool lhs_consecutive = Consecutive(lhs);
  const bool rhs_consecutive = Consecutive(rhs);
  const bool lhs_sorted = std::is_sorted(lhs.begin(), lhs.end());
  const bool rhs_sorted = std::is_sorted(rhs.begin(), rhs.end());
  return (lhs_consecutive && !lhs_sorted && !rhs_consecutive) ||
         (rhs_consecutive && !rhs_sorted && !lhs_consecutive) ||
         (lhs_consecutive && !lhs_sorted && rhs_consecutive && !rhs_sorted);
}

absl::Status SortContractingDimensions(Instruction* dot) {
  DotDimensionNumbers dnums = *dot->attrs().dot_dimension_numbers;
  if (dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dot->name(), ": lhs and rhs have different numbers of contracting dimensions"));
  }
  const std::vector<int64_t>& key = Consecutive(dnums.lhs_contracting_dimensions)
                                        ? dnums.lhs_contracting_dimensions
                                        : dnums.rhs_contracting_dimensions;
  std::vector<size_t> order(key.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  std::vector<int64_t> lhs, rhs;
  for (size_t i : order) {
    lhs.push_back(dnums.lhs_contracting_dimensions[i]);
    rhs.push_back(dnums.rhs_contracting_dimensions[i]);
  }
  dnums.lhs_contracting_dimensions = std::move(lhs);
  dnums.rhs_contracting_dimensions = std::move(rhs);
  dot->mutable_attrs().dot_dimension_numbers = std::move(dnums);
  return absl::OkStatus();
}

bool IsWellFormed(const Instruction& dot) {
  return dot.operand_count() >= 2 && dot.attrs().dot_dimension_numbers.has_value();
}

// A well-formed dot with operands in the default layout whose contracting
// dimensions are out of order: what the pass rewrites.
bool IsSortable(const Instruction& dot) {
  return HasDefaultMinorToMajor(dot.operand(0)->shape()) &&
         HasDefaultMinorToMajor(dot.operand(1)->shape()) &&
         NeedsSorting(*dot.attrs().dot_dimension_numbers);
}

}  // namespace

absl::StatusOr<bool> DotDimensionSorter::Run(Module& module) {
  std::vector<Instruction*> dots;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      Instruction* dot = instruction.get();
      if (dot->opcode() != Opcode::kDot) continue;
      if (!IsWellFormed(*dot)) {
        return absl::InvalidArgumentError(
            absl::StrCat(dot->name(), ": dot without two operands and dimension numbers"));
      }
      if (IsSortable(*dot)) dots.push_back(dot);
    }
  }
  for (Instruction* dot : dots) {
    HLOGYM_RETURN_IF_ERROR(SortContractingDimensions(dot));
  }
  return !dots.empty();
}

bool DotDimensionSorter::MayChange(const Module& module) const {
  // A malformed dot is Run's error to report: it may run.
  return ContainsInstruction(module, Opcode::kDot, [](const Instruction& dot) {
    return !IsWellFormed(dot) || IsSortable(dot);
  });
}

}  // namespace hlogym
