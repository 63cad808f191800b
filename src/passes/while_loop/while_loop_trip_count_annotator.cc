#include "passes/while_loop/while_loop_trip_count_annotator.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"
#include "passes/while_loop/while_loop_analysis.h"

namespace hlogym {
namespace {

// Where the loop's range is known, XLA's annotator also gives each read of the
// counter's final value after the loop (init + trip count * step) a constant
// of its own in place of the read, which it leaves behind unused.
absl::StatusOr<bool> ReplaceFinalCounterReads(Computation& computation, Instruction* while_op,
                                              const TrivialLoopRange& range) {
  bool changed = false;
  for (Instruction* user : std::vector<Instruction*>(while_op->users())) {
    if (user->opcode() != Opcode::kGetTupleElement ||
        user->attrs().tuple_index != range.induction_index || user->user_count() == 0) {
      continue;
    }
    Literal final_value(Shape::Scalar(user->shape().element_type()));
    final_value.SetFromInt64(0, range.init + range.trip_count * range.step);
    Instruction* constant =
        MakeConstant(&computation, std::move(final_value), user->shape().has_layout());
    HLOGYM_RETURN_IF_ERROR(user->ReplaceAllUsesWith(constant));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> WhileLoopTripCountAnnotator::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    // Gathered first: a final value's constant joins the computation.
    std::vector<Instruction*> while_ops;
    for (const auto& owned : computation->instructions()) {
      if (owned->opcode() == Opcode::kWhile && owned->operand_count() == 1 &&
          owned->called_computations().size() == 2) {
        while_ops.push_back(owned.get());
      }
    }
    for (Instruction* while_op : while_ops) {
      std::optional<int64_t> index = GetLoopInductionVarTupleIdx(while_op);
      if (!index) continue;
      std::string config = "{";
      std::optional<TrivialLoopRange> range = MatchTrivialLoopRange(while_op);
      // XLA records a range only where it counts up from a value of 0 or more.
      if (range && (range->step <= 0 || range->init < 0)) range.reset();
      std::optional<int64_t> trip_count =
          range ? std::optional<int64_t>(range->trip_count) : ComputeWhileLoopTripCount(while_op);
      if (trip_count)
        absl::StrAppend(&config, "\"known_trip_count\":{\"n\":\"", *trip_count, "\"},");
      if (range) {
        absl::StrAppend(&config, "\"known_init_step\":{\"init\":\"", range->init, "\",\"step\":\"",
                        range->step, "\"},");
        HLOGYM_ASSIGN(replaced, ReplaceFinalCounterReads(*computation, while_op, *range));
        changed |= replaced;
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
