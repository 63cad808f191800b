// reduce-window-resizer: rank-1 reduce-windows run as rank-2 ones between
// reshapes.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(ReduceWindowResizerTest, RankOneBecomesRankTwo) {
  PassRun run = RunPass("reduce-window-resizer", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  x = f32[8]{0} parameter(0)
  z = f32[] constant(0)
  ROOT rw = f32[4]{0} reduce-window(x, z), window={size=3 stride=2 pad=1_0}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[8,1]{1,0} reshape(f32[8]{0} %x)
CHECK: f32[4,1]{1,0} reduce-window({{.*}}), window={size=3x1 stride=2x1 pad=1_0x0_0}, to_apply=%add
CHECK: ROOT {{.*}} f32[4]{0} reshape(
)");
  ExpectSameSemantics(run);
}

TEST(ReduceWindowResizerTest, VariadicRankOne) {
  PassRun run = RunPass("reduce-window-resizer", R"(HloModule m
pair {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(s, m)
}
ENTRY main {
  x = f32[6] parameter(0)
  y = s32[6] parameter(1)
  z = f32[] constant(0)
  w = s32[] constant(-100)
  ROOT rw = (f32[6], s32[6]) reduce-window(x, y, z, w), window={size=2 pad=1_0}, to_apply=pair
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (f32[6,1], s32[6,1]) reduce-window(
CHECK: get-tuple-element(
CHECK: ROOT {{.*}} tuple(
)");
  ExpectSameSemantics(run);
}

TEST(ReduceWindowResizerTest, HigherRankNoChange) {
  PassRun run = RunPass("reduce-window-resizer", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  x = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT rw = f32[4,6] reduce-window(x, z), window={size=4x1 pad=3_0x0_0}, to_apply=add
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
