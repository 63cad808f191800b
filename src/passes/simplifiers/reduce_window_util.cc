#include "passes/simplifiers/reduce_window_util.h"

#include <memory>

#include "analysis/shape_inference.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"

namespace hlogym {

ReduceWindowOperands SplitReduceWindowOperands(const Instruction* reduce_window) {
  ReduceWindowOperands parts;
  const int64_t n = reduce_window->operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) parts.inputs.push_back(reduce_window->operand(i));
  for (int64_t i = n; i < 2 * n; ++i) parts.inits.push_back(reduce_window->operand(i));
  return parts;
}

absl::StatusOr<Instruction*> MakeReduceWindow(const std::vector<Instruction*>& inputs,
                                              const std::vector<Instruction*>& inits,
                                              const Window& window, Computation* reducer) {
  std::vector<Shape> input_shapes, init_shapes;
  for (Instruction* input : inputs) input_shapes.push_back(input->shape());
  for (Instruction* init : inits) init_shapes.push_back(init->shape());
  HLOGYM_ASSIGN(shape, InferReduceWindowShape(input_shapes, init_shapes, window, reducer));
  auto rw = std::make_unique<Instruction>(Opcode::kReduceWindow, shape);
  for (Instruction* input : inputs) rw->AppendOperand(input);
  for (Instruction* init : inits) rw->AppendOperand(init);
  rw->mutable_attrs().window = window;
  rw->mutable_called_computations().push_back(reducer);
  return AddWithLayoutOf(inputs[0]->parent(), std::move(rw), inputs[0]);
}

absl::StatusOr<Instruction*> ResultElement(Instruction* instruction, int64_t i) {
  if (!instruction->shape().IsTuple()) return instruction;
  return MakeGetTupleElement(instruction, i);
}

absl::Status ReplaceReduceWindow(Instruction* reduce_window,
                                 const std::vector<Instruction*>& results) {
  Computation* computation = reduce_window->parent();
  Instruction* replacement =
      reduce_window->shape().IsTuple() ? MakeTuple(computation, results) : results[0];
  return computation->ReplaceInstruction(reduce_window, replacement);
}

absl::Status ReplaceRankOneReduceWindowWithReshape(Instruction* reduce_window) {
  ReduceWindowOperands parts = SplitReduceWindowOperands(reduce_window);
  std::vector<Instruction*> inputs;
  for (Instruction* input : parts.inputs) {
    HLOGYM_ASSIGN(reshaped,
                  MakeReshape(input, std::vector<int64_t>{input->shape().dimensions(0), 1}));
    inputs.push_back(reshaped);
  }
  Window window = *reduce_window->attrs().window;
  window.dimensions.push_back(WindowDimension{});
  HLOGYM_ASSIGN(wide, MakeReduceWindow(inputs, parts.inits, window, reduce_window->to_apply()));
  std::vector<Instruction*> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HLOGYM_ASSIGN(element, ResultElement(wide, static_cast<int64_t>(i)));
    HLOGYM_ASSIGN(narrow,
                  MakeReshape(element, std::vector<int64_t>{element->shape().dimensions(0)}));
    results.push_back(narrow);
  }
  return ReplaceReduceWindow(reduce_window, results);
}

}  // namespace hlogym
