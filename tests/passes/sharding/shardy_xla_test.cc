// shardy-xla (single partition, no propagation): shard_map bodies made
// inlineable; modules without Shardy constructs left alone.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kManualCall = R"(HloModule m

xla.sdy.manual_computation_body {
  q = f32[4] parameter(0)
  ROOT e = f32[4] exponential(q)
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=xla.sdy.manual_computation_body, frontend_attributes={inlineable="true",xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
}
)";

TEST(ShardyXlaTest, ManualComputationBodyBecomesInlineable) {
  PassRun run = RunPass("shardy-xla", kManualCall);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: inlineable_callee
CHECK: ROOT %c = f32[4] call(f32[4] %p), to_apply=%inlineable_callee
)");
  EXPECT_EQ(run.after.find("inlineable=\"true\""), std::string::npos) << run.after;
  EXPECT_NE(run.after.find("xla.sdy.manual_axes"), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(ShardyXlaTest, OnlyAttributeGoesAway) {
  PassRun run = RunPass("shardy-xla", R"(HloModule m

xla.sdy.manual_computation_body.3 {
  q = f32[4] parameter(0)
  ROOT e = f32[4] negate(q)
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=xla.sdy.manual_computation_body.3, frontend_attributes={inlineable="true"}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("frontend_attributes"), std::string::npos) << run.after;
  EXPECT_CHECKS(run.after, R"(
CHECK: to_apply=%inlineable_callee
)");
}

TEST(ShardyXlaTest, NoChangeWithoutTheAttributeOrTheName) {
  PassRun no_attribute = RunPass("shardy-xla", R"(HloModule m

xla.sdy.manual_computation_body {
  q = f32[4] parameter(0)
  ROOT e = f32[4] exponential(q)
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=xla.sdy.manual_computation_body
}
)");
  EXPECT_FALSE(no_attribute.changed);
  PassRun other_callee = RunPass("shardy-xla", R"(HloModule m

body {
  q = f32[4] parameter(0)
  ROOT e = f32[4] exponential(q)
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=body, frontend_attributes={inlineable="true"}
}
)");
  EXPECT_FALSE(other_callee.changed);
}

TEST(ShardyXlaTest, NoChangeOnAPlainModule) {
  PassRun run =
      RunPass("shardy-xla",
              R"(HloModule m, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"x\"=1]>}"}
ENTRY main {
  p = f32[4] parameter(0), sharding={replicated}
  s = f32[4] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  ROOT n = f32[4] negate(s)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
