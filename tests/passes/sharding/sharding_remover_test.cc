// sharding-remover: Sharding custom calls bypassed.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ShardingRemoverTest, BypassesShardingCustomCalls) {
  PassRun run = RunPass("sharding-remover", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  s = f32[4] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  n = f32[4] negate(s)
  ROOT r = f32[4] custom-call(n), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: negate(f32[4] %p)
CHECK: custom_call_target="SPMDFullToShardShape"
CHECK: copy(f32[4] %p)
)");
  EXPECT_EQ(run.module->entry_computation()->root_instruction()->opcode(), Opcode::kNegate);
}

TEST(ShardingRemoverTest, LeavesModulesForSeveralPartitions) {
  // Bypassing the boundary would hand negate an f32[4] as its f32[2] operand.
  PassRun run = RunPass("sharding-remover", R"(HloModule m, num_partitions=2
ENTRY main {
  p = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  local = f32[2] custom-call(p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT n = f32[2] negate(local), sharding={manual}
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ShardingRemoverTest, LeavesOtherCustomCalls) {
  PassRun run = RunPass("sharding-remover", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT s = f32[4] custom-call(p), custom_call_target="foo"
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
