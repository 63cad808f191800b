// cse: identical instructions and constants, commutative operands,
// structurally equal to_apply computations, side effects.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(CseTest, MergesIdenticalInstructions) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  e1 = f32[4] exponential(p)
  e2 = f32[4] exponential(p)
  ROOT r = f32[4] add(e1, e2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: %e1 = f32[4] exponential(f32[4] %p)\nCHECK-NOT: %e2 =\nCHECK: add(f32[4] "
                "%e1, f32[4] %e1)");
}

TEST(CseTest, MergesConstantsByValueIgnoringLayout) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  c1 = f32[2]{0} constant({1, 2})
  c2 = f32[2] constant({1, 2})
  c3 = f32[2] constant({1, 3})
  a = f32[2] add(c1, c2)
  ROOT r = f32[2] add(a, c3)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      "CHECK: %c1 =\nCHECK-NOT: %c2 =\nCHECK: add(f32[2]{0} %c1, f32[2]{0} %c1)\nCHECK: %c3 =");
}

TEST(CseTest, CommutativeOperandOrderIgnored) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a1 = f32[4] add(p, q)
  a2 = f32[4] add(q, p)
  s1 = f32[4] subtract(p, q)
  s2 = f32[4] subtract(q, p)
  m = f32[4] multiply(a1, a2)
  ROOT r = f32[4] multiply(s1, s2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK-NOT: %a2 =\nCHECK: %s1 = f32[4] subtract(f32[4] %p, f32[4] %q)\nCHECK: %s2 "
                "= f32[4] subtract(f32[4] %q, f32[4] %p)");
}

TEST(CseTest, StructurallyEqualReduceComputations) {
  PassRun run = RunPass("cse", R"(HloModule m
region_0 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
region_1 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = f32[] add(x, y)
}
region_2 {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT w = f32[] maximum(u, v)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r0 = f32[] reduce(p, z), dimensions={0}, to_apply=region_0
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=region_1
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=region_2
  ROOT out = (f32[], f32[], f32[]) tuple(r0, r1, r2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK-NOT: %r1 = \nCHECK: %r2 = \nCHECK: tuple(f32[] %r0, f32[] %r0, f32[] %r2)");
}

TEST(CseTest, KeepsSideEffectsAndDifferentAttributes) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  b1 = f32[4,4] broadcast(r1), dimensions={0}
  b2 = f32[4,4] broadcast(r1), dimensions={1}
  ROOT t = (f32[4], f32[4], f32[4,4], f32[4,4]) tuple(r1, r2, b1, b2)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(CseTest, EqualIotasMerge) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  i1 = s32[4] iota(), iota_dimension=0
  i2 = s32[4] iota(), iota_dimension=0
  ROOT a = s32[4] subtract(i1, i2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: %i2 =\nCHECK: subtract(s32[4] %i1, s32[4] %i1)");
}

// Which of equal instructions stays is the first in XLA's post order (a walk
// from the root, operands in order), not in the list: here the shift of i2
// and the convert of i1 stay, so both iotas stay live, as in XLA (NumPyro's
// SVI steps, whose threefry splits each build their own iota).
TEST(CseTest, KeepsTheFirstOfEqualInstructionsInXlasPostOrder) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  i1 = u64[2] iota(), iota_dimension=0
  i2 = u64[2] iota(), iota_dimension=0
  c = u64[2] constant({32, 32})
  s1 = u64[2] shift-right-logical(i1, c)
  k1 = u32[2] convert(i1)
  s2 = u64[2] shift-right-logical(i2, c)
  k2 = u32[2] convert(i2)
  ROOT t = (u64[2], u32[2], u64[2], u32[2]) tuple(s2, k1, s1, k2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: %i2 = u64[2] iota()\n"
                "CHECK: %s2 = u64[2] shift-right-logical(u64[2] %i2, u64[2] %c)\n"
                "CHECK: %i1 = u64[2] iota()\n"
                "CHECK: %k1 = u32[2] convert(u64[2] %i1)\n"
                "CHECK-NOT: %s1 =\n"
                "CHECK-NOT: %k2 =\n"
                "CHECK: tuple(u64[2] %s2, u32[2] %k1, u64[2] %s2, u32[2] %k1)");
}

TEST(CseTest, NoChangeWhenAllDistinct) {
  PassRun run = RunPass("cse", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  n = f32[4] negate(p)
  ROOT r = f32[4] add(e, n)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
