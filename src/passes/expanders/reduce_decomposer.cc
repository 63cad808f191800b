#include "passes/expanders/reduce_decomposer.h"

#include <algorithm>
#include <vector>

#include "hlo/query.h"
#include "hlo/shape_util.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

bool Supported(const Shape& shape) {
  return shape.IsArray() && (!shape.has_layout() || shape.layout()->details.empty());
}

// The input layout with `dims` removed and the rest renumbered.
std::vector<int64_t> DeleteDimensions(const std::vector<int64_t>& minor_to_major,
                                      const std::vector<int64_t>& dims) {
  std::vector<int64_t> result;
  for (int64_t d : minor_to_major) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    int64_t below = std::count_if(dims.begin(), dims.end(), [&](int64_t x) { return x < d; });
    result.push_back(d - below);
  }
  return result;
}

Instruction* AddCopy(Computation* computation, Instruction* operand, Shape shape) {
  auto copy = std::make_unique<Instruction>(Opcode::kCopy, std::move(shape));
  copy->AppendOperand(operand);
  return computation->AddInstruction(std::move(copy));
}

bool IsPlainReduce(const Instruction* hlo) {
  if (hlo->opcode() != Opcode::kReduce || hlo->operand_count() % 2 != 0) return false;
  if (!hlo->control_predecessors().empty() || !hlo->control_successors().empty()) return false;
  const int64_t n = hlo->operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) {
    if (!Supported(hlo->operand(i)->shape())) return false;
  }
  if (hlo->shape().IsTuple()) {
    for (const Shape& element : hlo->shape().tuple_shapes()) {
      if (!Supported(element)) return false;
    }
    return true;
  }
  return Supported(hlo->shape());
}

// Whether either step would change `hlo`.
bool NeedsWork(const Instruction* hlo) {
  if (!IsPlainReduce(hlo)) return false;
  const int64_t n = hlo->operand_count() / 2;
  if (hlo->shape().IsTuple() ? hlo->shape().tuple_shapes_size() != n : n != 1) return false;
  const std::vector<int64_t> first = MinorToMajor(hlo->operand(0)->shape());
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> input = MinorToMajor(hlo->operand(i)->shape());
    if (input != first) return true;
    const Shape& output = hlo->shape().IsTuple() ? hlo->shape().tuple_shapes(i) : hlo->shape();
    if (MinorToMajor(output) != DeleteDimensions(input, hlo->attrs().dimensions)) return true;
  }
  return false;
}

absl::StatusOr<bool> EqualizeInputLayouts(Computation* computation) {
  bool changed = false;
  for (Instruction* reduce : computation->MakeInstructionPostOrder()) {
    if (!IsPlainReduce(reduce) || reduce->operand_count() <= 2) continue;
    const int64_t n = reduce->operand_count() / 2;
    const std::vector<int64_t> first = MinorToMajor(reduce->operand(0)->shape());
    std::vector<Instruction*> operands = reduce->operands();
    bool differs = false;
    for (int64_t i = 1; i < n; ++i) {
      if (MinorToMajor(operands[i]->shape()) != first) {
        operands[i] =
            AddCopy(computation, operands[i], WithMinorToMajor(operands[i]->shape(), first));
        differs = true;
      }
    }
    if (!differs) continue;
    auto clone = reduce->CloneWithNewOperands(operands, "");
    Instruction* replacement = computation->AddInstruction(std::move(clone));
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(reduce, replacement));
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> DecomposeReduces(Computation* computation) {
  bool changed = false;
  for (Instruction* reduce : computation->MakeInstructionPostOrder()) {
    if (!IsPlainReduce(reduce)) continue;
    const int64_t n = reduce->operand_count() / 2;
    const std::vector<int64_t>& dims = reduce->attrs().dimensions;
    std::vector<Shape> outputs;
    if (reduce->shape().IsTuple()) {
      outputs = reduce->shape().tuple_shapes();
    } else {
      outputs = {reduce->shape()};
    }
    if (static_cast<int64_t>(outputs.size()) != n) continue;
    std::vector<Shape> expected;
    bool mismatch = false;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> layout =
          DeleteDimensions(MinorToMajor(reduce->operand(i)->shape()), dims);
      expected.push_back(WithMinorToMajor(outputs[i], layout));
      if (MinorToMajor(outputs[i]) != layout) mismatch = true;
    }
    if (!mismatch) continue;
    auto clone = reduce->CloneWithNewOperands(reduce->operands(), "");
    clone->set_shape(reduce->shape().IsTuple() ? Shape::Tuple(expected) : expected[0]);
    Instruction* reduced = computation->AddInstruction(std::move(clone));
    Instruction* replacement = nullptr;
    if (!reduce->shape().IsTuple()) {
      replacement = AddCopy(computation, reduced, reduce->shape());
    } else {
      std::vector<Instruction*> copies;
      for (int64_t i = 0; i < n; ++i) {
        HLOGYM_ASSIGN(element, MakeGetTupleElement(reduced, i));
        element->set_shape(expected[i]);
        copies.push_back(AddCopy(computation, element, outputs[i]));
      }
      replacement = MakeTuple(computation, copies);
      replacement->set_shape(reduce->shape());
    }
    HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(reduce, replacement));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ReduceDecomposer::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    bool any_reduce = false;
    for (const auto& hlo : computation->instructions()) {
      if (hlo->opcode() == Opcode::kReduce && NeedsWork(hlo.get())) {
        any_reduce = true;
        break;
      }
    }
    if (!any_reduce) continue;
    HLOGYM_ASSIGN(equalized, EqualizeInputLayouts(computation));
    HLOGYM_ASSIGN(decomposed, DecomposeReduces(computation));
    changed |= equalized || decomposed;
  }
  run.Complete();
  return changed;
}

bool ReduceDecomposer::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kReduce,
                             [](const Instruction& reduce) { return NeedsWork(&reduce); });
}

}  // namespace hlogym
