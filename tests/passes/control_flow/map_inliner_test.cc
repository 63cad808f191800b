// map-inline: maps of a single op become the op.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(MapInlinerTest, InlinesElementwiseOp) {
  PassRun run = RunPass("map-inline", R"(HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(b, a)
}
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT m = f32[8] map(x, y), dimensions={0}, to_apply=f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: ENTRY\nCHECK: ROOT {{.*}} = f32[8] subtract(f32[8] %y, f32[8] %x)");
  ExpectSameSemantics(run);
}

TEST(MapInlinerTest, InlinesParameterAndConstant) {
  PassRun run = RunPass("map-inline", R"(HloModule m
first {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
two {
  a = f32[] parameter(0)
  ROOT c = f32[] constant(2)
}
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  m1 = f32[8] map(x, y), dimensions={0}, to_apply=first
  m2 = f32[8] map(x), dimensions={0}, to_apply=two
  ROOT t = (f32[8], f32[8]) tuple(m1, m2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK-NOT: map(
CHECK: broadcast(
CHECK: ROOT %t = (f32[8], f32[8]) tuple(f32[8] %y, f32[8] %{{.*}})
)");
  ExpectSameSemantics(run);
}

TEST(MapInlinerTest, KeepsLargerComputations) {
  PassRun run = RunPass("map-inline", R"(HloModule m
f {
  a = f32[] parameter(0)
  n = f32[] negate(a)
  ROOT e = f32[] exponential(n)
}
ENTRY main {
  x = f32[8] parameter(0)
  ROOT m = f32[8] map(x), dimensions={0}, to_apply=f
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
