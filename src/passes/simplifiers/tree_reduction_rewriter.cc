#include "passes/simplifiers/tree_reduction_rewriter.h"

#include <algorithm>
#include <vector>

#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/cpu_library_support.h"

namespace hlogym {
namespace {

bool NeedsRewrite(const Instruction* reduce, int64_t window_size, bool cpu_library_filter) {
  if (reduce->opcode() != Opcode::kReduce || reduce->operand_count() != 2) return false;
  if (!reduce->shape().IsArray()) return false;
  const Shape& input = reduce->operand(0)->shape();
  bool large = false;
  for (int64_t d : reduce->attrs().dimensions) {
    if (input.dimensions(d) > window_size) large = true;
  }
  if (!large) return false;
  return !(cpu_library_filter && YnnTakesReduceLike(*reduce));
}

absl::Status Rewrite(Instruction* reduce, int64_t window_size) {
  Computation* computation = reduce->parent();
  Instruction* input = reduce->operand(0);
  Instruction* init = reduce->operand(1);
  const Shape& input_shape = input->shape();
  const std::vector<int64_t>& dims = reduce->attrs().dimensions;
  Window window;
  for (int64_t d = 0; d < input_shape.rank(); ++d) {
    WindowDimension wd;
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      int64_t size = input_shape.dimensions(d);
      int64_t w = std::min(size, window_size);
      wd.size = w;
      wd.stride = w;
      // SAME padding: enough to cover ceil(size / w) windows, split evenly
      // with the extra element on the high side.
      int64_t outputs = (size + w - 1) / w;
      int64_t needed = std::max<int64_t>((outputs - 1) * w + w - size, 0);
      wd.padding_low = needed / 2;
      wd.padding_high = needed - wd.padding_low;
    }
    window.dimensions.push_back(wd);
  }
  std::vector<Shape> inputs = {input_shape};
  std::vector<Shape> inits = {init->shape()};
  HLOGYM_ASSIGN(shape, InferReduceWindowShape(inputs, inits, window, reduce->to_apply()));
  auto reduce_window = std::make_unique<Instruction>(Opcode::kReduceWindow, shape);
  reduce_window->AppendOperand(input);
  reduce_window->AppendOperand(init);
  reduce_window->mutable_attrs().window = window;
  reduce_window->mutable_called_computations().push_back(reduce->to_apply());
  Instruction* windowed = AddWithLayoutOf(computation, std::move(reduce_window), input);

  auto new_reduce = reduce->CloneWithNewOperands({windowed, init}, "");
  Instruction* added = computation->AddInstruction(std::move(new_reduce));
  for (Instruction* predecessor : reduce->control_predecessors()) {
    predecessor->AddControlDependencyTo(added);
  }
  for (Instruction* successor : reduce->control_successors()) {
    added->AddControlDependencyTo(successor);
  }
  return computation->ReplaceInstruction(reduce, added);
}

}  // namespace

absl::StatusOr<bool> TreeReductionRewriter::Run(Module& module) {
  TrackedRun run(module,
                 StrCat(name(), ":", reduce_window_size_, ":", cpu_library_filter_ ? 1 : 0));
  std::vector<Instruction*> reduces;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      if (NeedsRewrite(owned.get(), reduce_window_size_, cpu_library_filter_))
        reduces.push_back(owned.get());
    }
  }
  for (Instruction* reduce : reduces) {
    HLOGYM_RETURN_IF_ERROR(Rewrite(reduce, reduce_window_size_));
  }
  run.Complete();
  return !reduces.empty();
}

bool TreeReductionRewriter::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kReduce, [this](const Instruction& reduce) {
    return NeedsRewrite(&reduce, reduce_window_size_, cpu_library_filter_);
  });
}

absl::StatusOr<std::unique_ptr<Module>> SumsReordered(const Module& module) {
  std::unique_ptr<Module> reordered = module.Clone();
  HLOGYM_RETURN_IF_ERROR(
      TreeReductionRewriter(32, /*cpu_library_filter=*/false).Run(*reordered).status());
  return reordered;
}

}  // namespace hlogym
