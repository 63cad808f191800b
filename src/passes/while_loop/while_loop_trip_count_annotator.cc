#include "passes/while_loop/while_loop_trip_count_annotator.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "passes/change_tracking.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {

absl::StatusOr<bool> WhileLoopTripCountAnnotator::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& owned : computation->instructions()) {
      Instruction* while_op = owned.get();
      if (while_op->opcode() != Opcode::kWhile || while_op->operand_count() != 1 ||
          while_op->called_computations().size() != 2) {
        continue;
      }
      std::optional<int64_t> index = GetLoopInductionVarTupleIdx(while_op);
      if (!index) continue;
      std::string config = "{";
      std::optional<TrivialLoopRange> range = MatchTrivialLoopRange(while_op);
      std::optional<int64_t> trip_count =
          range ? std::optional<int64_t>(range->trip_count) : ComputeWhileLoopTripCount(while_op);
      if (trip_count)
        absl::StrAppend(&config, "\"known_trip_count\":{\"n\":\"", *trip_count, "\"},");
      if (range) {
        absl::StrAppend(&config, "\"known_init_step\":{\"init\":\"", range->init, "\",\"step\":\"",
                        range->step, "\"},");
      }
      absl::StrAppend(&config, "\"known_induction_variable\":{\"tuple_index\":\"", *index,
                      "\"},\"dynamic_variables\":[]}");
      const RawAttribute* existing = while_op->attrs().FindRaw("backend_config");
      if (existing != nullptr && existing->value == config) continue;
      while_op->mutable_attrs().SetRaw("backend_config", config);
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

bool WhileLoopTripCountAnnotator::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kWhile});
}

}  // namespace hlogym
