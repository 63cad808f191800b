// Helpers of the agent tests.
#ifndef HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_
#define HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_

#include <string_view>

#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "passes/pass.h"

namespace hlogym {

// Removes the entry's first add by forwarding its first operand: one
// instruction fewer, and a different function (what an agent's check must catch).
class DropAddPass : public Pass {
 public:
  std::string_view name() const override { return "drop-add"; }
  absl::StatusOr<bool> Run(Module& module) override {
    Computation* entry = module.entry_computation();
    for (const auto& instruction : entry->instructions()) {
      if (instruction->opcode() != Opcode::kAdd || instruction.get() == entry->root_instruction() ||
          !(instruction->operand(0)->shape() == instruction->shape())) {
        continue;
      }
      if (absl::Status s = instruction->ReplaceAllUsesWith(instruction->operand(0)); !s.ok()) {
        return s;
      }
      if (absl::Status s = entry->RemoveInstruction(instruction.get()); !s.ok()) return s;
      return true;
    }
    return false;
  }
};

}  // namespace hlogym

#endif  // HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_
