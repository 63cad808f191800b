// simplify-fp-conversions: chains of float converts collapse to one.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(SimplifyFpConversionsTest, RoundTripChainBecomesSource) {
  PassRun run = RunPass("simplify-fp-conversions", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  a = bf16[4] convert(x)
  ROOT b = f32[4] convert(a)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: ROOT %x = f32[4] parameter(0)
CHECK-NOT: convert()");
}

TEST(SimplifyFpConversionsTest, LongerChainBecomesOneConvert) {
  PassRun run = RunPass("simplify-fp-conversions", R"(HloModule m
ENTRY main {
  x = f16[4] parameter(0)
  a = f32[4] convert(x)
  b = bf16[4] convert(a)
  ROOT c = f64[4] convert(b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: ROOT {{.*}} = f64[4] convert(f16[4] %x)
CHECK-NOT: bf16)");
}

TEST(SimplifyFpConversionsTest, KeepsSingleAndIntegerConverts) {
  PassRun run = RunPass("simplify-fp-conversions", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  a = s32[4] convert(x)
  b = f32[4] convert(a)
  ROOT c = bf16[4] convert(x)
  d = (f32[4]) tuple(b)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
