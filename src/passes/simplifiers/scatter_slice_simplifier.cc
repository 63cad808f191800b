#include "passes/simplifiers/scatter_slice_simplifier.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// What a matched scatter is rebuilt from.
struct Match {
  Instruction* scatter = nullptr;
  std::vector<int64_t> limits;              // the common slice limits
  absl::flat_hash_set<Instruction*> chain;  // gte and elementwise values in between
  std::vector<Instruction*> slices;
};

// The extent of the update window along operand dimension `dim`, or
// nullopt when the dimension must not be cut.
std::optional<int64_t> WindowExtent(const Instruction* scatter, int64_t dim) {
  const ScatterDimensionNumbers& dn = *scatter->attrs().scatter_dimension_numbers;
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (contains(dn.input_batching_dims, dim)) return std::nullopt;
  if (contains(dn.inserted_window_dims, dim)) return 1;
  int64_t window = 0;  // position of `dim` among the window dimensions
  for (int64_t d = 0; d < dim; ++d) {
    if (!contains(dn.inserted_window_dims, d) && !contains(dn.input_batching_dims, d)) ++window;
  }
  if (window >= static_cast<int64_t>(dn.update_window_dims.size())) return std::nullopt;
  const int64_t update_dim = dn.update_window_dims[window];
  const int64_t count = (scatter->operand_count() - 1) / 2;
  const Shape& updates = scatter->operand(1 + count)->shape();
  if (update_dim < 0 || update_dim >= updates.rank()) return std::nullopt;
  return updates.dimensions(update_dim);
}

std::optional<Match> MatchScatter(Instruction* scatter) {
  if (scatter->opcode() != Opcode::kScatter ||
      !scatter->attrs().scatter_dimension_numbers.has_value() || scatter->to_apply() == nullptr ||
      scatter->operand_count() < 3 || scatter->operand_count() % 2 == 0) {
    return std::nullopt;
  }
  const int64_t count = (scatter->operand_count() - 1) / 2;
  for (const Instruction* operand : scatter->operands()) {
    if (!operand->shape().IsArray()) return std::nullopt;
  }
  const std::vector<int64_t>& dims = scatter->operand(0)->shape().dimensions();
  for (int64_t i = 0; i < count; ++i) {
    if (scatter->operand(i)->shape().dimensions() != dims) return std::nullopt;
  }
  if ((count == 1) != scatter->shape().IsArray()) return std::nullopt;
  Match match;
  match.scatter = scatter;
  std::vector<Instruction*> work = {scatter};
  absl::flat_hash_set<Instruction*> seen = {scatter};
  while (!work.empty()) {
    Instruction* value = work.back();
    work.pop_back();
    if (value->IsRoot() || value->HasControlEdges()) return std::nullopt;
    for (Instruction* user : value->users()) {
      if (user->opcode() == Opcode::kSlice) {
        if (!user->shape().IsArray() || user->attrs().slice.size() != dims.size()) {
          return std::nullopt;
        }
        std::vector<int64_t> limits;
        for (const SliceDimension& s : user->attrs().slice) {
          if (s.start != 0 || s.stride != 1) return std::nullopt;
          limits.push_back(s.limit);
        }
        if (match.limits.empty() && match.slices.empty()) match.limits = limits;
        if (limits != match.limits) return std::nullopt;
        if (std::find(match.slices.begin(), match.slices.end(), user) == match.slices.end()) {
          match.slices.push_back(user);
        }
        continue;
      }
      const bool gte = user->opcode() == Opcode::kGetTupleElement && value->shape().IsTuple();
      const bool elementwise = IsElementwise(user->opcode()) && value->shape().IsArray() &&
                               user->shape().IsArray() && user->shape().dimensions() == dims;
      if (!gte && !elementwise) return std::nullopt;
      if (elementwise) {
        for (const Instruction* operand : user->operands()) {
          if (!operand->shape().IsArray() || operand->shape().dimensions() != dims) {
            return std::nullopt;
          }
        }
      }
      if (seen.insert(user).second) {
        match.chain.insert(user);
        work.push_back(user);
      }
    }
  }
  if (match.slices.empty() || match.limits == dims) return std::nullopt;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (match.limits[d] == dims[d]) continue;
    std::optional<int64_t> extent = WindowExtent(scatter, static_cast<int64_t>(d));
    if (!extent.has_value() || *extent != 1) return std::nullopt;
  }
  return match;
}

absl::StatusOr<Instruction*> SliceTo(Instruction* operand, const std::vector<int64_t>& limits) {
  std::vector<SliceDimension> slice;
  for (int64_t limit : limits) slice.push_back({0, limit, 1});
  return MakeSlice(operand, slice);
}

Shape ShapeAt(const Shape& shape, const std::vector<int64_t>& limits) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(ShapeAt(element, limits));
    return Shape::Tuple(std::move(elements));
  }
  Shape result(shape.element_type(), limits);
  if (shape.has_layout()) result.SetDefaultLayout();
  return result;
}

absl::Status Rewrite(const Match& match) {
  Instruction* scatter = match.scatter;
  Computation* computation = scatter->parent();
  Module& module = *computation->parent();
  absl::flat_hash_map<Instruction*, Instruction*> rebuilt;
  auto rebuild = [&](Instruction* old, const std::vector<Instruction*>& operands) {
    auto clone = old->CloneWithNewOperands(operands, module.UniqueName(old->name()));
    clone->set_shape(ShapeAt(old->shape(), match.limits));
    rebuilt[old] = computation->AddInstruction(std::move(clone));
  };
  const int64_t count = (scatter->operand_count() - 1) / 2;
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < scatter->operand_count(); ++i) {
    Instruction* operand = scatter->operand(i);
    if (i < count) {
      HLOGYM_ASSIGN(sliced, SliceTo(operand, match.limits));
      operand = sliced;
    }
    operands.push_back(operand);
  }
  rebuild(scatter, operands);
  for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
    if (!match.chain.contains(instruction)) continue;
    std::vector<Instruction*> new_operands;
    for (Instruction* operand : instruction->operands()) {
      if (auto it = rebuilt.find(operand); it != rebuilt.end()) {
        new_operands.push_back(it->second);
      } else {
        HLOGYM_ASSIGN(sliced, SliceTo(operand, match.limits));
        new_operands.push_back(sliced);
      }
    }
    rebuild(instruction, new_operands);
  }
  for (Instruction* slice : match.slices) {
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(slice, rebuilt.at(slice->operand(0))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> ScatterSliceSimplifier::Run(Module& module) {
  auto callers = ComputeCallers(module);
  bool changed = false;
  for (const auto& computation : module.computations()) {
    bool fusion_body = false;
    if (auto it = callers.find(computation.get()); it != callers.end()) {
      for (const Instruction* caller : it->second) {
        fusion_body |= caller->opcode() == Opcode::kFusion;
      }
    }
    if (fusion_body) continue;
    // Each rewrite edits the graph, so look for the next match afresh.
    while (true) {
      std::optional<Match> match;
      for (Instruction* instruction : computation->MakeInstructionPostOrder()) {
        if (instruction->opcode() != Opcode::kScatter) continue;
        match = MatchScatter(instruction);
        if (match.has_value()) break;
      }
      if (!match.has_value()) break;
      HLOGYM_RETURN_IF_ERROR(Rewrite(*match));
      changed = true;
    }
  }
  return changed;
}

// A rewrite needs a scatter read through slices.
bool ScatterSliceSimplifier::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kScatter}) && ContainsOpcode(module, {Opcode::kSlice});
}

}  // namespace hlogym
