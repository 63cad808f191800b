// logistic-expander: logistic(x) -> 1 / (1 + exp(-x)).
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(LogisticExpanderTest, ExpandsLogistic) {
  PassRun run = RunPass("logistic-expander", R"(HloModule m
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT l = f32[2,3] logistic(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[] constant(1)
CHECK: broadcast(
CHECK: negate(f32[2,3] %x)
CHECK: exponential(
CHECK: add(
CHECK: ROOT {{.*}} divide(
CHECK-NOT: logistic
)");
  ExpectSameSemantics(run);
}

TEST(LogisticExpanderTest, NoLogisticNoChange) {
  PassRun run = RunPass("logistic-expander", R"(HloModule m
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT t = f32[2,3] tanh(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
