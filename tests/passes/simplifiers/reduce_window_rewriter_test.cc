// reduce-window-rewriter: long scans become two-level scans; rank-1
// reduce-windows become rank 2.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ReduceWindowRewriterTest, RankOneBecomesRankTwo) {
  PassRun run = RunPass("reduce-window-rewriter", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[10] parameter(0)
  zero = f32[] constant(0)
  ROOT rw = f32[5] reduce-window(x, zero), window={size=3 stride=2 pad=0_1}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[10,1] reshape(f32[10] %x)
CHECK: f32[5,1] reduce-window({{.*}}), window={size=3x1 stride=2x1 pad=0_1x0_0}, to_apply=%add
CHECK: ROOT {{.*}} f32[5] reshape(
)");
  ExpectSameSemantics(run);
}

TEST(ReduceWindowRewriterTest, ForwardInclusiveScan) {
  // cumsum over dimension 0 (length 40 > 16) of a rank-2 array.
  PassRun run = RunPass("reduce-window-rewriter", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[40,3] parameter(0)
  zero = f32[] constant(0)
  ROOT rw = f32[40,3] reduce-window(x, zero), window={size=40x1 pad=39_0x0_0}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[3,40] transpose(f32[40,3] %x), dimensions={1,0}
CHECK: f32[3,48] pad({{.*}}), padding=0_0x0_8
CHECK: f32[3,3,16] reshape(
CHECK: f32[3,3,16] reduce-window({{.*}}), window={size=1x1x16 pad=0_0x0_0x15_0}
CHECK: f32[3,3,1] slice({{.*}}), slice={[0:3], [0:3], [15:16]}
CHECK: f32[3,4] reduce-window({{.*}}), window={size=1x3 pad=0_0x3_0}
CHECK: f32[3,3] slice({{.*}}), slice={[0:3], [0:3]}
CHECK: broadcast({{.*}}), dimensions={0,1}
CHECK: f32[3,3,16] map({{.*}}), dimensions={0,1,2}, to_apply=%add
CHECK: f32[3,48] reshape(
CHECK: f32[48,3] transpose({{.*}}), dimensions={1,0}
CHECK: ROOT {{.*}} f32[40,3] slice({{.*}}), slice={[0:40], [0:3]}
)");
  ExpectSameSemantics(run);
}

TEST(ReduceWindowRewriterTest, ReverseExclusiveVariadicScan) {
  PassRun run = RunPass("reduce-window-rewriter", R"(HloModule m
maxi {
  a = s32[] parameter(0)
  i = s32[] parameter(1)
  b = s32[] parameter(2)
  j = s32[] parameter(3)
  m = s32[] maximum(a, b)
  n = s32[] minimum(i, j)
  ROOT t = (s32[], s32[]) tuple(m, n)
}
ENTRY main {
  x = s32[20] parameter(0)
  y = s32[20] parameter(1)
  lo = s32[] constant(-100000)
  z = s32[] constant(100000)
  ROOT rw = (s32[21], s32[21]) reduce-window(x, y, lo, z), window={size=20 pad=0_20}, to_apply=maxi
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: maxi.clone
CHECK: (s32[2,16], s32[2,16]) reduce-window({{.*}}), window={size=1x16 pad=0_0x0_15}
CHECK: window={size=2 pad=0_2}
CHECK: s32[2,16] map({{.*}}), dimensions={0,1}, to_apply=%maxi.clone
CHECK: s32[21] pad({{.*}}), padding=0_1
CHECK: ROOT {{.*}} tuple(
)");
  ExpectSameSemantics(run);
}

TEST(ReduceWindowRewriterTest, ShortScanAndRankTwoNoChange) {
  PassRun run = RunPass("reduce-window-rewriter", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[16,3] parameter(0)
  zero = f32[] constant(0)
  ROOT rw = f32[16,3] reduce-window(x, zero), window={size=16x1 pad=15_0x0_0}, to_apply=add
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
