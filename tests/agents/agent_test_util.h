// Helpers of the agent tests.
#ifndef HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_
#define HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "agents/agent.h"
#include "gtest/gtest.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/status_macros.h"
#include "passes/pass.h"
#include "scratch.h"

namespace hlogym {

// D: the op count the default pipeline reaches on `benchmark`.
inline int64_t DefaultOpCount(const std::string& benchmark) {
  auto agent = MakeAgent("default");
  EXPECT_TRUE(agent.ok());
  auto result = (*agent)->Optimize(benchmark, SearchBudget{});
  EXPECT_TRUE(result.ok()) << result.status();
  return result->op_count;
}

// How WriteBatchNormModule computes the batch norm's scale and offset.
enum class BatchNormInputs {
  kAsGiven,
  // scale * scale + scale * scale: one multiply that only cse removes.
  kTwiceScaled,
  // scale times ones, offset plus zeros: six instructions that algsimp
  // removes (the multiply, the add, their broadcasts and constants).
  kTimesOnesPlusZeros,
};

// A batch norm the default expands, and one dead add: below I only with dce, above it after the
// default. Written to a temporary file, whose path it returns.
inline std::string WriteBatchNormModule(const std::string& file_name,
                                        BatchNormInputs inputs = BatchNormInputs::kAsGiven) {
  const std::string path = testing::FreshScratchPath(file_name).string();
  std::ofstream file(path);
  file << R"(HloModule bn
ENTRY main {
  x = f32[2,4,3,3] parameter(0)
  scale = f32[4] parameter(1)
  offset = f32[4] parameter(2)
  mean = f32[4] parameter(3)
  variance = f32[4] parameter(4)
  unused = f32[4] add(mean, variance)
)";
  std::string scale = "scale", offset = "offset";
  if (inputs == BatchNormInputs::kTwiceScaled) {
    file << R"(  squared = f32[4] multiply(scale, scale)
  squared_again = f32[4] multiply(scale, scale)
  both = f32[4] add(squared, squared_again)
)";
    scale = "both";
  } else if (inputs == BatchNormInputs::kTimesOnesPlusZeros) {
    file << R"(  one = f32[] constant(1)
  ones = f32[4] broadcast(one), dimensions={}
  scaled = f32[4] multiply(scale, ones)
  zero = f32[] constant(0)
  zeros = f32[4] broadcast(zero), dimensions={}
  shifted = f32[4] add(offset, zeros)
)";
    scale = "scaled";
    offset = "shifted";
  }
  file << "  ROOT y = f32[2,4,3,3] batch-norm-inference(x, " << scale << ", " << offset
       << ", mean, variance), epsilon=0.001, feature_index=1\n}\n";
  return path;
}

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
      HLOGYM_RETURN_IF_ERROR(entry->RemoveInstruction(instruction.get()));
      return true;
    }
    return false;
  }
};

}  // namespace hlogym

#endif  // HLOGYM_TESTS_AGENTS_AGENT_TEST_UTIL_H_
