// flatten-call-graph: one computation per call site.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(FlattenCallGraphTest, ClonesSharedCallee) {
  PassRun run = RunPass("flatten-call-graph", R"(HloModule m
f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  ROOT c2 = f32[4] call(c1), to_apply=f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 3);
  EXPECT_CHECKS(run.after, R"(
CHECK: %f (
CHECK: %f.clone (
CHECK: ENTRY %main
CHECK: call(f32[4] %p), to_apply=%f
CHECK: call(f32[4] %c1), to_apply=%f.clone
)");
}

TEST(FlattenCallGraphTest, ClonesNestedControlFlowCallees) {
  PassRun run = RunPass("flatten-call-graph", R"(HloModule m
g {
  y = f32[4] parameter(0)
  ROOT e = f32[4] exponential(y)
}
f {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=g
}
ENTRY main {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  ROOT c2 = f32[4] call(c1), to_apply=f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 5);
}

// The pinned XLA splits reducers shared by several reduces too (the corpus's
// flatten-call-graph pairs clone the reducer a reduce-window and a reduce
// share); single call sites stay.
TEST(FlattenCallGraphTest, ClonesSharedReducerLeavesSingleSites) {
  PassRun run = RunPass("flatten-call-graph", R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
  c = f32[4] call(p), to_apply=f
  ROOT t = (f32[], f32[], f32[4]) tuple(r1, r2, c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 4);
  EXPECT_EQ(run.module->instruction_count(), 14);
  EXPECT_CHECKS(run.after, R"(
CHECK: %r1 = {{.*}}to_apply=%add_f32
CHECK: %r2 = {{.*}}to_apply=%add_f32.clone
CHECK: call({{.*}}to_apply=%f
)");
  ExpectSameSemantics(run);
}

TEST(FlattenCallGraphTest, LeavesSingleSites) {
  PassRun run = RunPass("flatten-call-graph", R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
  c = f32[4] call(p), to_apply=f
  ROOT t = (f32[], f32[4]) tuple(r1, c)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(FlattenCallGraphTest, ControlFlowAndEmbeddedUseClonesEverySite) {
  PassRun run = RunPass("flatten-call-graph", R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
  ROOT c = f32[] call(r, z), to_apply=add_f32
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: reduce({{.*}}to_apply=%add_f32\nCHECK: call({{.*}}to_apply=%add_f32.clone");
}

}  // namespace
}  // namespace hlogym::testing
