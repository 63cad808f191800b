// strip-memory-placement-annotations: placement custom calls bypassed.
// (No evaluator equivalence: the evaluator models these custom calls as
// opaque functions, not as the identity XLA means them to be.)
#include "passes/pass_test_util.h"
#include "text/parser.h"

namespace hlogym::testing {
namespace {

TEST(StripMemoryPlacementAnnotationsTest, BypassesAnnotateDevicePlacement) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] custom-call(p), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_host"}
  ROOT m = f32[4] multiply(a, a)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: custom-call
CHECK: ROOT %m = f32[4] multiply(f32[4] %p, f32[4] %p)
)");
}

TEST(StripMemoryPlacementAnnotationsTest, BypassesMoveToHostAndBack) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  h = f32[4] custom-call(p), custom_call_target="MoveToHost"
  d = f32[4] custom-call(h), custom_call_target="MoveToDevice"
  ROOT n = f32[4] negate(d)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: custom-call
CHECK: ROOT %n = f32[4] negate(f32[4] %p)
)");
  EXPECT_EQ(run.module->entry_computation()->instruction_count(), 2);
}

TEST(StripMemoryPlacementAnnotationsTest, AnnotationAtTheRootInANestedComputation) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
callee {
  q = f32[4] parameter(0)
  e = f32[4] exponential(q)
  ROOT a = f32[4] custom-call(e), custom_call_target="MoveToHost"
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=callee
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: callee
CHECK: ROOT %e = f32[4] exponential(f32[4] %q)
)");
}

TEST(StripMemoryPlacementAnnotationsTest, MovesShardingAndDropsControlEdges) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  y = f32[4] negate(p)
  a = f32[4] custom-call(x), custom_call_target="MoveToHost", sharding={replicated}, control-predecessors={y}
  ROOT t = (f32[4], f32[4]) tuple(a, y)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %x = f32[4] exponential(f32[4] %p), sharding={replicated}
CHECK: ROOT %t = (f32[4], f32[4]) tuple(f32[4] %x, f32[4] %y)
)");
  EXPECT_EQ(run.after.find("control-predecessors"), std::string::npos) << run.after;
}

TEST(StripMemoryPlacementAnnotationsTest, KeepsTheOperandsOwnSharding) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0), sharding={maximal device=0}
  ROOT a = f32[4] custom-call(p), custom_call_target="MoveToDevice", sharding={replicated}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %p = f32[4] parameter(0), sharding={maximal device=0}
)");
}

TEST(StripMemoryPlacementAnnotationsTest, LeavesOtherCustomCalls) {
  PassRun run = RunPass("strip-memory-placement-annotations", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  s = f32[4] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  ROOT u = f32[4] custom-call(s), custom_call_target="MoveToHostish"
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(StripMemoryPlacementAnnotationsTest, TwoOperandsIsAnErrorNamingTheInstruction) {
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  h = f32[4] custom-call(q), custom_call_target="MoveToHost"
  ROOT bad = f32[4] custom-call(p, h), custom_call_target="MoveToDevice"
}
)",
                            "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string before = PrintModule(**module);
  auto pass = PassRegistry::Builtin().Create("strip-memory-placement-annotations");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad"), std::string::npos) << changed.status();
  EXPECT_EQ(before, PrintModule(**module));
}

}  // namespace
}  // namespace hlogym::testing
