// conditional-canonicalizer: tuple-shaped conditional results.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConditionalCanonicalizerTest, WrapsArrayResultInTuple) {
  PassRun run = RunPass("conditional-canonicalizer", R"(HloModule m
on_true {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
on_false {
  ROOT a = f32[4] parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  c = f32[4] conditional(q, x, x), true_computation=on_true, false_computation=on_false
  ROOT e = f32[4] exponential(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: on_true
CHECK: ROOT {{.*}} = (f32[4]) tuple(f32[4] %n)
CHECK: on_false
CHECK: ROOT {{.*}} = (f32[4]) tuple(f32[4] %a)
CHECK: ENTRY
CHECK: %c = (f32[4]) conditional(
CHECK: get-tuple-element((f32[4]) %c), index=0
CHECK: ROOT %e = f32[4] exponential(
)");
  ExpectSameSemantics(run, 4);
}

TEST(ConditionalCanonicalizerTest, TupleResultUnchanged) {
  PassRun run = RunPass("conditional-canonicalizer", R"(HloModule m
on_true {
  a = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(a)
}
on_false {
  a = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(a)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = (f32[4]) conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
