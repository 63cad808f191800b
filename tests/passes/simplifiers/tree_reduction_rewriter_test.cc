// tree_reduction_rewriter: large reductions split into reduce(reduce-window).
#include "eval/equivalence.h"
#include "passes/pass_test_util.h"

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
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: f32[8,4] reduce-window(f32[8,100] %p, f32[] %z), window={size=1x32 stride=1x32 pad=0_0x14_14}, to_apply=%add
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
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: f32[63] reduce-window(f32[2000] %p, f32[] %z), window={size=32 stride=32 pad=8_8}
CHECK: ROOT {{.*}} = f32[] reduce(f32[63] )");
  auto pass = PassRegistry::Builtin().Create("tree_reduction_rewriter");
  ASSERT_TRUE(pass.ok());
  auto again = (*pass)->Run(*run.module);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
  EXPECT_CHECKS(PrintModule(*run.module),
                R"(CHECK: f32[2] reduce-window(f32[63] {{.*}}), window={size=32 stride=32 pad=0_1}
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

// XLA's CPU compiler keeps large f32 add/max/min reduces that keep a dimension
// whole (it hands them to YNNPACK); 4096 input elements is the boundary.
TEST(TreeReductionRewriterTest, KeepsLargeLibraryReductionsWhole) {
  // What XLA's CPU compiler hands to YNNPACK: add/max/min reducers on
  // library types, over at least 4096 elements, reductions to a scalar too.
  PassRun run = RunPass("tree_reduction_rewriter", std::string("HloModule m\n") + kAdd + R"(
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(y, x)
}
addd {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT s = f64[] add(x, y)
}
mxb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT m = bf16[] maximum(x, y)
}
ENTRY main {
  p = f32[4,16,64] parameter(0)
  d = f64[4,16,64] parameter(1)
  b = bf16[4,16,64] parameter(2)
  z = f32[] constant(0)
  zd = f64[] constant(0)
  zb = bf16[] constant(0)
  s = f32[4,16] reduce(p, z), dimensions={2}, to_apply=add
  m = f32[4,16] reduce(p, z), dimensions={2}, to_apply=mx
  c = f32[64] reduce(p, z), dimensions={0,1}, to_apply=add
  scalar = f32[] reduce(p, z), dimensions={0,1,2}, to_apply=add
  wide = f64[4,16] reduce(d, zd), dimensions={2}, to_apply=addd
  half = bf16[4,16] reduce(b, zb), dimensions={2}, to_apply=mxb
  ROOT t = (f32[4,16], f32[4,16], f32[64], f32[], f64[4,16], bf16[4,16]) tuple(s, m, c, scalar, wide, half)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(TreeReductionRewriterTest, SplitsSmallAndNonLibraryReductions) {
  PassRun run = RunPass("tree_reduction_rewriter", std::string("HloModule m\n") + kAdd + R"(
mul {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] multiply(x, y)
}
addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY main {
  p = f32[4,16,64] parameter(0)
  q = f32[2,16,64] parameter(1)
  b = bf16[4,16,64] parameter(2)
  t = f32[64,64]{0,1} parameter(3)
  z = f32[] constant(0)
  one = f32[] constant(1)
  zb = bf16[] constant(0)
  small = f32[2,16] reduce(q, z), dimensions={2}, to_apply=add
  scalar = f32[] reduce(q, z), dimensions={0,1,2}, to_apply=add
  prod = f32[4,16] reduce(p, one), dimensions={2}, to_apply=mul
  narrow = bf16[4,16] reduce(b, zb), dimensions={2}, to_apply=addb
  cols = f32[64] reduce(t, z), dimensions={0}, to_apply=add
  ROOT r = (f32[2,16], f32[], f32[4,16], bf16[4,16], f32[64]) tuple(small, scalar, prod, narrow, cols)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: f32[2,16,2] reduce-window(f32[2,16,64] %q, f32[] %z), window={size=1x1x32 stride=1x1x32}
CHECK: f32[2,16] reduce(f32[2,16,2]
CHECK: f32[1,1,2] reduce-window(f32[2,16,64] %q, f32[] %z), window={size=2x16x32 stride=2x16x32}
CHECK: f32[] reduce(f32[1,1,2]
CHECK: f32[4,16,2] reduce-window(f32[4,16,64] %p, f32[] %one), window={size=1x1x32 stride=1x1x32}, to_apply=%mul
CHECK: bf16[4,16,2] reduce-window(bf16[4,16,64] %b, bf16[] %zb), window={size=1x1x32 stride=1x1x32}, to_apply=%addb
CHECK: reduce-window(f32[64,64]{0,1} %t, f32[] %z), window={size=32x1 stride=32x1})");
  auto original = ParseModule(run.before, "before.hlo");
  ASSERT_TRUE(original.ok()) << original.status();
  auto result = CheckEquivalent(**original, *run.module);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->equivalent) << result->message;
}

}  // namespace
}  // namespace hlogym::testing
