// comparison-expander: TOTALORDER float compares become integer compares.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ComparisonExpanderTest, ExpandsTotalOrderCompare) {
  PassRun run = RunPass("comparison-expander", R"(HloModule m
ENTRY main {
  x = f32[5] parameter(0)
  y = f32[5] constant({-0, 0, nan, -inf, 1})
  ROOT c = pred[5] compare(x, y), direction=LT, type=TOTALORDER
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[5]{{.*}} bitcast-convert(f32[5]{{.*}} %x)
CHECK: s32[] constant(0)
CHECK: compare({{.*}}), direction=LT
CHECK: s32[] constant(2147483647)
CHECK: xor(
CHECK: select(
CHECK: ROOT {{.*}} = pred[5]{{.*}} compare(s32[5]{{.*}}, s32[5]{{.*}}), direction=LT
CHECK-NOT: TOTALORDER
)");
  ExpectSameSemantics(run);
}

TEST(ComparisonExpanderTest, ExpandsInsideSortComparator) {
  PassRun run = RunPass("comparison-expander", R"(HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY main {
  x = f32[16] parameter(0)
  ROOT s = f32[16] sort(x), dimensions={0}, to_apply=less
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: less\nCHECK: bitcast-convert\nCHECK: ROOT {{.*}} compare({{.*}}), "
                "direction=GT\nCHECK: ENTRY");
  ExpectSameSemantics(run);
}

// XLA broadcasts its constants even to a scalar shape and leaves an unused INT_MIN splat
// behind; op counts match XLA's (1 compare -> 15 instructions).
TEST(ComparisonExpanderTest, ScalarExpansionMatchesXlaShape) {
  PassRun run = RunPass("comparison-expander", R"(HloModule m
ENTRY main {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] constant(-2147483648)
CHECK: s32[] broadcast(s32[] %{{.*}}), dimensions={}
CHECK: s32[] constant(0)
CHECK: s32[] broadcast(s32[] %{{.*}}), dimensions={}
CHECK: s32[] constant(2147483647)
CHECK: s32[] broadcast(s32[] %{{.*}}), dimensions={}
CHECK: ROOT {{.*}} = pred[] compare(s32[] %{{.*}}, s32[] %{{.*}}), direction=GT
)");
  EXPECT_EQ(run.module->instruction_count(), 17);
  ExpectSameSemantics(run);
}

TEST(ComparisonExpanderTest, LeavesOtherComparesAlone) {
  PassRun run = RunPass("comparison-expander", R"(HloModule m
ENTRY main {
  x = f32[5] parameter(0)
  y = s32[5] parameter(1)
  z = s32[5] parameter(2)
  a = pred[5] compare(x, x), direction=LT
  b = pred[5] compare(y, z), direction=LT
  ROOT t = (pred[5], pred[5]) tuple(a, b)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
