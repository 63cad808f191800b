#include "passes/expanders/reduce_window_resizer.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"
#include "passes/simplifiers/reduce_window_util.h"

namespace hlogym {

absl::StatusOr<bool> ReduceWindowResizer::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Instruction*> rank_one;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      Instruction* instruction = owned.get();
      if (instruction->opcode() != Opcode::kReduceWindow) continue;
      if (instruction->operand_count() < 2 || instruction->operand_count() % 2 != 0 ||
          !instruction->attrs().window.has_value() || instruction->to_apply() == nullptr ||
          !instruction->operand(0)->shape().IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(instruction->name(), ": malformed reduce-window"));
      }
      if (instruction->operand(0)->shape().rank() == 1) rank_one.push_back(instruction);
    }
  }
  for (Instruction* reduce_window : rank_one) {
    HLOGYM_RETURN_IF_ERROR(ReplaceRankOneReduceWindowWithReshape(reduce_window));
  }
  run.Complete();
  return !rank_one.empty();
}

bool ReduceWindowResizer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kReduceWindow});
}

}  // namespace hlogym
