// conditional-to-select: conditionals inside embedded computations.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConditionalToSelectTest, ConvertsConditionalInsideMap) {
  PassRun run = RunPass("conditional-to-select", R"(HloModule m
on_true {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
on_false {
  ROOT a = f32[] parameter(0)
}
mapped {
  x = f32[] parameter(0)
  zero = f32[] constant(0)
  neg = pred[] compare(x, zero), direction=LT
  ROOT c = f32[] conditional(neg, x, x), true_computation=on_true, false_computation=on_false
}
ENTRY main {
  v = f32[8] parameter(0)
  ROOT m = f32[8] map(v), dimensions={0}, to_apply=mapped
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: mapped
CHECK-NOT: conditional(
CHECK: ROOT {{.*}} select(pred[] %neg
)");
  ExpectSameSemantics(run);
}

TEST(ConditionalToSelectTest, LeavesEntryConditionals) {
  PassRun run = RunPass("conditional-to-select", R"(HloModule m
on_true {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
on_false {
  ROOT a = f32[] parameter(0)
}
ENTRY main {
  x = f32[] parameter(0)
  q = pred[] parameter(1)
  ROOT c = f32[] conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
