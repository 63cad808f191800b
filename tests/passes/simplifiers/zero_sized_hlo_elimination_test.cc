// zero_sized_hlo_elimination: zero-element arrays become constants.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ZeroSizedHloEliminationTest, ReplacesZeroElementArrays) {
  PassRun run = RunPass("zero_sized_hlo_elimination", R"(HloModule m
ENTRY main {
  p = f32[0,3] parameter(0)
  n = f32[0,3] negate(p)
  e = f32[0,3] exponential(n)
  q = f32[3] parameter(1)
  ROOT t = (f32[0,3], f32[3]) tuple(e, q)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %p = f32[0,3] parameter(0)
CHECK-NOT: negate
CHECK-NOT: exponential
CHECK: f32[0,3]{1,0} constant({  })
CHECK: ROOT %t
)");
}

TEST(ZeroSizedHloEliminationTest, ReadersOfAnEmptyParameterTakeAConstant) {
  // The parameters stay in the signatures; the concatenate and the root of
  // the branch read an empty constant instead, as in XLA.
  PassRun run = RunPass("zero_sized_hlo_elimination", R"(HloModule m
branch {
  ROOT b = f32[0] parameter(0)
}

ENTRY main {
  p = f32[0] parameter(0)
  q = f32[2] parameter(1)
  k = s32[] parameter(2)
  n = f32[2] concatenate(p, q), dimensions={0}
  c = f32[0] conditional(k, p), branch_computations={branch}
  ROOT t = (f32[2], f32[0]) tuple(n, c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %branch
CHECK: %b = f32[0] parameter(0)
CHECK: ROOT %{{.*}} = f32[0]{0} constant({})
CHECK: ENTRY
CHECK: %p = f32[0] parameter(0)
CHECK: %constant.1 = f32[0]{0} constant({})
CHECK: concatenate(f32[0]{0} %constant.1, f32[2] %q)
)");
}

TEST(ZeroSizedHloEliminationTest, KeepsUnreadParametersConstantsAndNonEmptyArrays) {
  PassRun run = RunPass("zero_sized_hlo_elimination", R"(HloModule m
ENTRY main {
  p = f32[0] parameter(0)
  c = f32[0] constant({})
  q = f32[2] parameter(1)
  n = f32[2] negate(q)
  ROOT t = (f32[0], f32[2]) tuple(c, n)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
