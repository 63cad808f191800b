#include "passes/expanders/reshape_decomposer.h"

#include <optional>
#include <vector>

#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

Shape WithDescendingLayout(const Shape& shape) {
  std::vector<int64_t> order;
  for (int64_t d = shape.rank() - 1; d >= 0; --d) order.push_back(d);
  return WithMinorToMajor(shape, order);
}

// XLA's ShapeUtil::AlignLayouts: `output` with a layout making the reshape
// from `input` a bitcast, if one exists.
std::optional<Shape> AlignLayouts(const Shape& input, const Shape& output) {
  const int64_t in_rank = input.rank();
  const int64_t out_rank = output.rank();
  std::vector<std::pair<int64_t, int64_t>> parts = {{0, 0}};
  std::vector<int64_t> part_of(in_rank, 0);
  int64_t in_product = 1;
  int64_t out_product = 1;
  for (int64_t i = 0, j = 0; i < in_rank || j < out_rank;) {
    if (in_product == out_product && in_product > 1) {
      parts.push_back({i, j});
      in_product = out_product = 1;
    }
    if (in_product < out_product || j == out_rank) {
      if (i == in_rank) return std::nullopt;
      part_of[i] = static_cast<int64_t>(parts.size()) - 1;
      in_product *= input.dimensions(i);
      ++i;
    } else {
      out_product *= output.dimensions(j);
      ++j;
    }
  }
  if (in_product != out_product) return std::nullopt;
  parts.push_back({in_rank, out_rank});
  const std::vector<int64_t> in_order = MinorToMajor(input);
  std::vector<int64_t> out_order;
  for (int64_t i = 0; i < in_rank;) {
    int64_t current = in_order[i];
    if (input.dimensions(current) == 1) {
      ++i;
      continue;
    }
    const int64_t part = part_of[current];
    int64_t non_trivial = 0;
    for (int64_t d = parts[part].first; d < parts[part + 1].first; ++d) {
      if (input.dimensions(d) != 1) ++non_trivial;
    }
    for (int64_t seen = 0; seen < non_trivial; ++i) {
      if (i == in_rank) return std::nullopt;
      const int64_t d = in_order[i];
      if (input.dimensions(d) == 1) continue;
      if (part_of[d] != part || d > current) return std::nullopt;
      current = d;
      ++seen;
    }
    for (int64_t d = parts[part + 1].second - 1; d >= parts[part].second; --d) {
      if (output.dimensions(d) != 1) out_order.push_back(d);
    }
  }
  for (int64_t d = 0; d < out_rank; ++d) {
    if (output.dimensions(d) == 1) out_order.push_back(d);
  }
  if (static_cast<int64_t>(out_order.size()) != out_rank) return std::nullopt;
  Shape aligned = WithMinorToMajor(output, out_order);
  if (!ReshapeIsBitcast(input, aligned)) return std::nullopt;
  return aligned;
}

bool Supported(const Shape& shape) {
  return shape.IsArray() && shape.is_static() &&
         (!shape.has_layout() || shape.layout()->details.empty());
}

Instruction* Add(Computation* computation, Opcode opcode, Shape shape, Instruction* operand) {
  auto hlo = std::make_unique<Instruction>(opcode, std::move(shape));
  hlo->AppendOperand(operand);
  return computation->AddInstruction(std::move(hlo));
}

}  // namespace

absl::StatusOr<bool> ReshapeDecomposer::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    std::vector<Instruction*> reshapes;
    for (const auto& hlo : computation->instructions()) {
      if (hlo->opcode() != Opcode::kReshape) continue;
      const Shape& s = hlo->shape();
      const Shape& s0 = hlo->operand(0)->shape();
      if (!Supported(s) || !Supported(s0) || ReshapeIsBitcast(s, s0)) continue;
      reshapes.push_back(hlo.get());
    }
    for (Instruction* reshape : reshapes) {
      Instruction* operand = reshape->operand(0);
      const Shape s = reshape->shape();
      const Shape s0 = operand->shape();
      Instruction* replacement = nullptr;
      if (std::optional<Shape> input_aligned = AlignLayouts(s, s0)) {
        Instruction* copy = Add(computation, Opcode::kCopy, *input_aligned, operand);
        replacement = Add(computation, Opcode::kReshape, s, copy);
      } else if (std::optional<Shape> output_aligned = AlignLayouts(s0, s)) {
        Instruction* bitcast = Add(computation, Opcode::kReshape, *output_aligned, operand);
        replacement = Add(computation, Opcode::kCopy, s, bitcast);
      } else {
        Instruction* c1 = Add(computation, Opcode::kCopy, WithDescendingLayout(s0), operand);
        Instruction* r = Add(computation, Opcode::kReshape, WithDescendingLayout(s), c1);
        replacement = Add(computation, Opcode::kCopy, s, r);
      }
      for (Instruction* predecessor : reshape->control_predecessors()) {
        predecessor->AddControlDependencyTo(replacement);
      }
      for (Instruction* successor : reshape->control_successors()) {
        replacement->AddControlDependencyTo(successor);
      }
      HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(reshape, replacement));
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

bool ReshapeDecomposer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReshape});
}

}  // namespace hlogym
