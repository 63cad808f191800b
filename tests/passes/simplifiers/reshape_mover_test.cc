// reshape-mover: sinking reshapes and transposes below elementwise ops.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ReshapeMoverTest, SinksEquivalentReshapes) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3] add(f32[2,3] %a, f32[2,3] %b)
CHECK: ROOT {{.*}} = f32[6] reshape(
CHECK-NOT: %ra)");
}

TEST(ReshapeMoverTest, SinksTransposeAndRearrangesConstant) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  c = f32[3,2] constant({{1,2},{3,4},{5,6}})
  ROOT m = f32[3,2] multiply(t, c)
}
)");
  EXPECT_TRUE(run.changed);
  // As in XLA, the transpose operand gets an inverse transpose that algsimp
  // later cancels.
  EXPECT_CHECKS(run.after, R"(CHECK: %transpose = f32[2,3] transpose(f32[3,2] %t), dimensions={1,0}
CHECK: f32[2,3] transpose(f32[3,2] %c), dimensions={1,0}
CHECK: f32[2,3] multiply(f32[2,3] %transpose, f32[2,3] %{{.*}})
CHECK: ROOT {{.*}} = f32[3,2] transpose({{.*}}), dimensions={1,0})");
}

TEST(ReshapeMoverTest, SinksReshapePastScalarBroadcastAndConvert) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  x = f32[] parameter(1)
  r = f32[6] reshape(a)
  b = f32[6] broadcast(x), dimensions={}
  m = f32[6] maximum(r, b)
  ROOT c = s32[6] convert(m)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3] reshape(f32[6] %b)
CHECK: f32[2,3] maximum(f32[2,3] %a,
CHECK: f32[6] reshape(
CHECK: ROOT %c = s32[6] convert)");
}

TEST(ReshapeMoverTest, SinksTransposePastOrderKeepingBroadcast) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  v = f32[2,4] parameter(1)
  t = f32[3,2,4] transpose(a), dimensions={1,0,2}
  b = f32[3,2,4] broadcast(v), dimensions={1,2}
  ROOT s = f32[3,2,4] subtract(t, b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3,4] transpose(f32[3,2,4] %t), dimensions={1,0,2}
CHECK: f32[2,3,4] transpose(f32[3,2,4] %b), dimensions={1,0,2}
CHECK: f32[2,3,4] subtract(
CHECK: ROOT {{.*}} = f32[3,2,4] transpose({{.*}}), dimensions={1,0,2})");
}

TEST(ReshapeMoverTest, OneDimensionalBroadcastOnlyWithCheapOption) {
  const char* hlo = R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  v = f32[3] parameter(1)
  r = f32[3,2] reshape(a)
  b = f32[3,2] broadcast(v), dimensions={0}
  ROOT s = f32[3,2] add(r, b)
}
)";
  EXPECT_FALSE(RunPass("reshape-mover", hlo).changed);
  PassRun run = RunPass("reshape-mover-1d-broadcast-cheap", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3] add(f32[2,3] %a,
CHECK: ROOT {{.*}} = f32[3,2] reshape()");
}

TEST(ReshapeMoverTest, KeepsRearrangeWithOtherUsersOrMismatchedOperands) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  c = f32[6] parameter(2)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  mismatched = f32[6] add(ra, rb)
  shared = f32[6] reshape(a)
  s = f32[6] multiply(shared, shared)
  d = f32[3] slice(shared), slice={[0:3]}
  v = f32[6] negate(c)
  ROOT t = (f32[6], f32[6], f32[3], f32[6]) tuple(mismatched, s, d, v)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ReshapeMoverTest, SharedRearrangeMovesWhenAllUsersMove) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  r = f32[6] reshape(a)
  n = f32[6] negate(r)
  e = f32[6] exponential(r)
  ROOT t = (f32[6], f32[6]) tuple(n, e)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3] negate(f32[2,3] %a)
CHECK: f32[2,3] exponential(f32[2,3] %a)
CHECK-NOT: %r = )");
}

// An XLA after-optimization dump (issue 19): transposes with non-default
// layouts inside a fusion. XLA's reshape-mover, like its algsimp, leaves fused
// computations alone; sinking the transpose past the copy there left a
// transpose of a transpose that algsimp never visits, and xla-cpu-default grew
// a TF BERT dump from 30 transposes to 3,030.
constexpr char kFusedTransposeWithLayouts[] = R"(HloModule m
fused {
  p = f32[2,4,32,8]{3,2,1,0} parameter(0)
  t = f32[2,32,4,8]{3,1,2,0} transpose(p), dimensions={0,2,1,3}
  c = f32[2,32,4,8]{3,2,1,0} copy(t)
  ROOT b = f32[2,32,32]{2,1,0} bitcast(c)
}
ENTRY main {
  x = f32[2,4,32,8]{3,2,1,0} parameter(0)
  ROOT f = f32[2,32,32]{2,1,0} fusion(x), kind=kLoop, calls=fused
}
)";

TEST(ReshapeMoverTest, LeavesFusedComputationsAlone) {
  PassRun run = RunPass("reshape-mover", kFusedTransposeWithLayouts);
  EXPECT_FALSE(run.changed) << run.after;
}

TEST(ReshapeMoverTest, DefaultPipelineDoesNotGrowALaidOutFusedModule) {
  auto pipeline = PassRegistry::WithPipelines().Create("xla-cpu-default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PassRun run = RunPass(**pipeline, kFusedTransposeWithLayouts);
  EXPECT_CHECKS(run.after, R"(
CHECK: fused
CHECK: transpose(
CHECK-NOT: transpose(
CHECK: ENTRY
)");
}

// A reshape that only changes the layout moves data, so it is sunk (as XLA's ShapeUtil::Equal
// tells it from a no-op); the add takes its operands' layout, the reshape back keeps the root's.
TEST(ReshapeMoverTest, SinksLayoutChangingReshapes) {
  constexpr char kHlo[] = R"(HloModule m
ENTRY main {
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[2,3]{1,0} parameter(1)
  r0 = f32[2,3]{0,1} reshape(p0)
  r1 = f32[2,3]{0,1} reshape(p1)
  ROOT a = f32[2,3]{0,1} add(r0, r1)
}
)";
  PassRun run = RunPass("reshape-mover", kHlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3]{1,0} add(f32[2,3]{1,0} %p0, f32[2,3]{1,0} %p1)
CHECK: ROOT {{.*}} = f32[2,3]{0,1} reshape()");
  ExpectSameSemantics(run);

  // The same reshapes without the layout change are no-ops, left for algsimp.
  PassRun same = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[2,3]{1,0} parameter(1)
  r0 = f32[2,3] reshape(p0)
  r1 = f32[2,3]{1,0} reshape(p1)
  ROOT a = f32[2,3]{1,0} add(r0, r1)
}
)");
  EXPECT_FALSE(same.changed);
}

// The inverse reshape of an operand carries the layout of the rearrange's operand.
TEST(ReshapeMoverTest, InverseReshapeKeepsTheSourceLayout) {
  PassRun run = RunPass("reshape-mover", R"(HloModule m
ENTRY main {
  p0 = f32[2,3]{0,1} parameter(0)
  p1 = f32[6]{0} parameter(1)
  r0 = f32[6]{0} reshape(p0)
  c = f32[6]{0} constant({1, 2, 3, 4, 5, 6})
  m = f32[6]{0} multiply(r0, c)
  ROOT a = f32[6]{0} add(m, p1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3]{0,1} reshape(f32[6]{0} %c)
CHECK: f32[2,3]{0,1} multiply(f32[2,3]{0,1} %p0)");
}

}  // namespace
}  // namespace hlogym::testing
