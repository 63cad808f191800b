// tree_reduction_rewriter: large reductions split into reduce(reduce-window).
#include "pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr const char* kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(TreeReductionRewriterTest, SplitsLargeReducedDimensionWithSamePadding) {
  PassRun run = RunPass("tree_reduction_rewriter", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  p = f32[8,100] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[8,4] reduce-window(f32[8,100] %p, f32[] %z), window={size=1x32 stride=1x32 pad=0_0x14_14}, to_apply=%add
CHECK: ROOT {{.*}} = f32[8] reduce(f32[8,4] %{{.*}}, f32[] %z), dimensions={1}, to_apply=%add)");
}

TEST(TreeReductionRewriterTest, RepeatedRunsReachSmallReductions) {
  PassRun run = RunPass("tree_reduction_rewriter", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  p = f32[2000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[63] reduce-window(f32[2000] %p, f32[] %z), window={size=32 stride=32 pad=8_8}
CHECK: ROOT {{.*}} = f32[] reduce(f32[63] )");
  auto pass = PassRegistry::Builtin().Create("tree_reduction_rewriter");
  ASSERT_TRUE(pass.ok());
  auto again = (*pass)->Run(*run.module);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
  EXPECT_CHECKS(PrintModule(*run.module), R"(CHECK: f32[2] reduce-window(f32[63] {{.*}}), window={size=32 stride=32 pad=0_1}
CHECK: ROOT {{.*}} = f32[] reduce(f32[2] )");
  again = (*pass)->Run(*run.module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(TreeReductionRewriterTest, KeepsSmallAndVariadicReductions) {
  PassRun run = RunPass("tree_reduction_rewriter", R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t)
}
ENTRY main {
  p = f32[100,32] parameter(0)
  q = s32[100] parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  small = f32[100] reduce(p, z), dimensions={1}, to_apply=add
  v = f32[32] slice(small), slice={[0:32]}
  var = (f32[], s32[]) reduce(small, q, z, zi), dimensions={0}, to_apply=add2
  ROOT t = (f32[32], (f32[], s32[])) tuple(v, var)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
