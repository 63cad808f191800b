// constant_folding: what is folded and XLA's limits on folding.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConstantFoldingTest, FoldsArithmeticOnConstants) {
  PassRun run = RunPass("constant_folding", R"(HloModule m
ENTRY main {
  a = f32[2] constant({1, 2})
  b = f32[2] constant({10, 20})
  s = f32[2] add(a, b)
  ROOT n = f32[2] negate(s)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: add(\nCHECK: ROOT %{{.*}} = f32[2] constant({-11, -22})");
}

TEST(ConstantFoldingTest, FoldsWithBroadcastAndIotaOperandsAndReduce) {
  PassRun run = RunPass("constant_folding", R"(HloModule m
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  one = f32[] constant(1)
  b = f32[3] broadcast(one), dimensions={}
  i = f32[3] iota(), iota_dimension=0
  c = f32[3] constant({5, 5, 5})
  m = f32[3] multiply(c, b)
  j = f32[3] add(c, i)
  z = f32[] constant(0)
  r = f32[] reduce(j, z), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[3], f32[]) tuple(m, r)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK-NOT: multiply(
CHECK-NOT: reduce(
CHECK: constant({5, 5, 5})
CHECK: constant(18)
CHECK: ROOT %t
)");
}

TEST(ConstantFoldingTest, LeavesBroadcastIotaRngAndParameterUses) {
  PassRun run = RunPass("constant_folding", R"(HloModule m
ENTRY main {
  p = f32[3] parameter(0)
  one = f32[] constant(1)
  b = f32[3] broadcast(one), dimensions={}
  i = f32[3] iota(), iota_dimension=0
  bi = f32[3] add(b, i)
  pa = f32[3] add(p, b)
  lo = f32[] constant(0)
  r = f32[3] rng(lo, one), distribution=rng_uniform
  ROOT t = (f32[3], f32[3], f32[3]) tuple(bi, pa, r)
}
)");
  // bi has no constant operand (only a broadcast and an iota): XLA leaves it
  // for algsimp.
  EXPECT_FALSE(run.changed);
}

TEST(ConstantFoldingTest, SkipsElidedConstantsAndCustomCalls) {
  PassRun run = RunPass("constant_folding", R"(HloModule m
ENTRY main {
  big = f32[100] constant({...})
  n = f32[100] negate(big)
  c = f32[2] constant({1, 2})
  cc = f32[2] custom-call(c), custom_call_target="foo"
  ROOT t = (f32[100], f32[2]) tuple(n, cc)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ConstantFoldingTest, SkipsWhileLoops) {
  PassRun run = RunPass("constant_folding", R"(HloModule m
cond {
  c = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(c, ten), direction=LT
}
body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT inc = s32[] add(b, one)
}
ENTRY main {
  zero = s32[] constant(0)
  ROOT w = s32[] while(zero), condition=cond, body=body
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
