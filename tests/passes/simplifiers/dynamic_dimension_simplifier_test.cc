// dynamic-dimension-simplifier: concat flattening and forwarding of slices,
// reshapes and converts that give back what they were given.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DynamicDimensionSimplifierTest, FlattensNestedConcatenates) {
  PassRun run = RunPass("dynamic-dimension-simplifier", R"(HloModule m
ENTRY main {
  a = s32[1] parameter(0)
  b = s32[2] parameter(1)
  c = s32[3] parameter(2)
  ab = s32[3] concatenate(a, b), dimensions={0}
  ROOT abc = s32[6] concatenate(ab, c), dimensions={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} s32[6] concatenate(s32[1] %a, s32[2] %b, s32[3] %c), dimensions={0}
)");
  EXPECT_EQ(run.module->instruction_count(), 4);
  ExpectSameSemantics(run);
}

TEST(DynamicDimensionSimplifierTest, ForwardsSliceReshapeAndConvert) {
  PassRun run = RunPass("dynamic-dimension-simplifier", R"(HloModule m
ENTRY main {
  a = s32[1] parameter(0)
  b = s32[2] parameter(1)
  x = f32[] parameter(2)
  ab = s32[3] concatenate(a, b), dimensions={0}
  sb = s32[2] slice(ab), slice={[1:3]}
  bx = f32[1] broadcast(x), dimensions={}
  rx = f32[] reshape(bx)
  cx = f32[] convert(rx)
  sb2 = f32[2] convert(sb)
  r1 = f32[1,2] reshape(sb2)
  r2 = f32[2] reshape(r1)
  ROOT t = (s32[2], f32[], f32[2]) tuple(sb, cx, r2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} tuple(s32[2] %b, f32[] %x, f32[2] %sb2)
)");
  // Forwarded instructions stay for dce, as in XLA.
  EXPECT_EQ(run.module->instruction_count(), 12);
  ExpectSameSemantics(run);
}

TEST(DynamicDimensionSimplifierTest, NothingToForwardNoChange) {
  PassRun run = RunPass("dynamic-dimension-simplifier", R"(HloModule m
ENTRY main {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ab = s32[4] concatenate(a, b), dimensions={0}
  s = s32[3] slice(ab), slice={[1:4]}
  c = f32[3] convert(s)
  ROOT r = f32[3,1] reshape(c)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(DynamicDimensionSimplifierTest, LeavesFusedComputationsAlone) {
  // As XLA's: an identity reshape inside a fusion stays; the one outside goes.
  PassRun run = RunPass("dynamic-dimension-simplifier", R"(HloModule m
fused {
  p = f32[4] parameter(0)
  ROOT r = f32[4] reshape(p)
}
ENTRY main {
  x = f32[4] parameter(0)
  f = f32[4] fusion(x), kind=kLoop, calls=fused
  ROOT r = f32[4] reshape(f)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: fused
CHECK: ROOT %r = f32[4] reshape(
CHECK: ENTRY
CHECK: ROOT %f = f32[4] fusion(
)");
}

}  // namespace
}  // namespace hlogym::testing
