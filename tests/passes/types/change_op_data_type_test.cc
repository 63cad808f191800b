// change-op-data-type (XLA's CPU instance): f16 dots and convolutions
// compute in f32 between converts.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ChangeOpDataTypeTest, F16DotComputesInF32) {
  PassRun run = RunPass("change-op-data-type", R"(HloModule m
ENTRY main {
  a = f16[2,3]{1,0} parameter(0)
  b = f16[3,4]{1,0} parameter(1)
  ROOT d = f16[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,3]{1,0} convert(f16[2,3]{1,0} %a)
CHECK: f32[3,4]{1,0} convert(f16[3,4]{1,0} %b)
CHECK: f32[2,4]{1,0} dot({{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: ROOT {{.*}} f16[2,4]{1,0} convert(
)");
  ExpectSameSemantics(run);
}

TEST(ChangeOpDataTypeTest, F16ConvolutionWithF32ResultNeedsNoConvertBack) {
  PassRun run = RunPass("change-op-data-type", R"(HloModule m
ENTRY main {
  x = f16[1,5,2] parameter(0)
  k = f16[3,2,4] parameter(1)
  ROOT c = f32[1,3,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[1,5,2] convert(f16[1,5,2] %x)
CHECK: f32[3,2,4] convert(f16[3,2,4] %k)
CHECK: ROOT {{.*}} f32[1,3,4] convolution(
)");
  ExpectSameSemantics(run);
}

TEST(ChangeOpDataTypeTest, OtherTypesAndOpsNoChange) {
  PassRun run = RunPass("change-op-data-type", R"(HloModule m
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  d = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f16[2,4] parameter(2)
  s = f16[2,4] add(h, h)
  ROOT t = (bf16[2,4], f16[2,4]) tuple(d, s)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
