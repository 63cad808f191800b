// cse_barrier_expander: opt-barriers removed.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(OptimizationBarrierExpanderTest, RemovesBarriers) {
  PassRun run = RunPass("cse_barrier_expander", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = (f32[4], f32[4]) tuple(p, q)
  b = (f32[4], f32[4]) opt-barrier(t)
  g = f32[4] get-tuple-element(b), index=0
  ROOT n = f32[4] negate(g)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: opt-barrier\nCHECK: get-tuple-element((f32[4], f32[4]) %t)");
}

TEST(OptimizationBarrierExpanderTest, NoBarrierNoChange) {
  PassRun run = RunPass("cse_barrier_expander", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
