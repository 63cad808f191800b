// simplify-sorts: unused sort operands dropped.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(SortSimplifierTest, DropsUnusedOperands) {
  PassRun run = RunPass("simplify-sorts", R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = u8[] parameter(4)
  f = u8[] parameter(5)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  w = u8[8] parameter(2)
  s = (f32[8], s32[8], u8[8]) sort(k, v, w), dimensions={0}, to_apply=cmp
  g0 = f32[8] get-tuple-element(s), index=0
  g2 = u8[8] get-tuple-element(s), index=2
  ROOT t = (f32[8], u8[8]) tuple(g0, g2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %cmp.1 (a.1: f32[], b.1: f32[], e.1: u8[], f.1: u8[]) -> pred[]
CHECK: ENTRY
CHECK: (f32[8], u8[8]) sort(f32[8] %k, u8[8] %w)
CHECK: get-tuple-element({{.*}}), index=1
)");
}

TEST(SortSimplifierTest, SingleOperandLeftBecomesArraySort) {
  PassRun run = RunPass("simplify-sorts", R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  s = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT g0 = f32[8] get-tuple-element(s), index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK: ROOT {{.*}} = f32[8] sort(f32[8] %k)");
}

TEST(SortSimplifierTest, KeepsOperandsTheComparatorReads) {
  PassRun run = RunPass("simplify-sorts", R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(c, d), direction=LT
}
ENTRY main {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  s = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT g0 = f32[8] get-tuple-element(s), index=0
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
