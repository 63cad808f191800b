#include "passes/types/simplify_fp_conversions.h"

#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/change_tracking.h"

namespace hlogym {

absl::StatusOr<bool> SimplifyFpConversions::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  bool changed = false;
  for (const auto& owned : module.computations()) {
    Computation* computation = owned.get();
    if (!run.MustVisit(*computation)) continue;
    bool any_convert = false;
    for (const auto& hlo : computation->instructions()) {
      if (hlo->opcode() == Opcode::kConvert && IsFloatingPointType(hlo->shape().element_type()) &&
          hlo->operand(0)->opcode() == Opcode::kConvert &&
          IsFloatingPointType(hlo->operand(0)->shape().element_type())) {
        any_convert = true;
        break;
      }
    }
    if (!any_convert) continue;
    // Post order: every member of a chain precedes its end, and the
    // instructions a rewrite leaves dead are among those already visited.
    for (Instruction* hlo : computation->MakeInstructionPostOrder()) {
      Instruction* source = hlo;
      int chain = 0;
      while (source->opcode() == Opcode::kConvert &&
             IsFloatingPointType(source->shape().element_type())) {
        source = source->operand(0);
        ++chain;
      }
      if (chain < 2) continue;
      if (!hlo->control_successors().empty() || !hlo->control_predecessors().empty()) continue;
      Instruction* replacement = source;
      if (source->shape().element_type() != hlo->shape().element_type()) {
        auto convert = std::make_unique<Instruction>(Opcode::kConvert, hlo->shape());
        convert->AppendOperand(source);
        replacement = computation->AddInstruction(std::move(convert));
      }
      HLOGYM_RETURN_IF_ERROR(computation->ReplaceInstruction(hlo, replacement));
      changed = true;
    }
  }
  run.Complete();
  return changed;
}

bool SimplifyFpConversions::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kConvert});
}

}  // namespace hlogym
