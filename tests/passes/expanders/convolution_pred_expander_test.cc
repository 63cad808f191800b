// convolution-pred-expander: pred convolutions computed in f16 between
// converts; everything else left alone.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConvolutionPredExpanderTest, PredConvolutionComputedInF16) {
  PassRun run = RunPass("convolution-pred-expander", R"(HloModule m
ENTRY main {
  x = pred[1,5,5,2] parameter(0)
  k = pred[2,2,2,2] parameter(1)
  ROOT c = pred[1,4,4,2] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
}
)");
  // (A window of 8 taps, so that the OR of coin flips is false often enough for the
  // comparison to mean something: with 27 taps every output is true.)
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %{{.*}} = f16[1,5,5,2] convert(pred[1,5,5,2] %x)
CHECK: f16[2,2,2,2] convert(pred[2,2,2,2] %k)
CHECK: f16[1,4,4,2] convolution(f16[1,5,5,2] {{.*}}, f16[2,2,2,2] {{.*}}), window={size=2x2}, dim_labels=b01f_01io->b01f
CHECK: ROOT {{.*}} = pred[1,4,4,2] convert(f16[1,4,4,2]
CHECK-NOT: pred[1,4,4,2] convolution
)");
  ExpectSameSemantics(run);
}

TEST(ConvolutionPredExpanderTest, KeepsGroupsPaddingAndLayout) {
  PassRun run = RunPass("convolution-pred-expander", R"(HloModule m
ENTRY main {
  x = pred[2,4,6]{2,1,0} parameter(0)
  k = pred[3,3,6]{2,1,0} parameter(1)
  c = pred[2,4,6]{2,1,0} convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, feature_group_count=2
  ROOT n = pred[2,4,6]{2,1,0} not(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f16[2,4,6]{2,1,0} convolution({{.*}}), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, feature_group_count=2
CHECK: %{{.*}} = pred[2,4,6]{2,1,0} convert(
CHECK: ROOT {{.*}} not(
)");
  ExpectSameSemantics(run);
}

TEST(ConvolutionPredExpanderTest, OtherConvolutionsUnchanged) {
  // f32 convolutions, and pred operands with a non-pred result.
  PassRun run = RunPass("convolution-pred-expander", R"(HloModule m
ENTRY main {
  x = f32[1,5,5,3] parameter(0)
  k = f32[3,3,3,2] parameter(1)
  a = f32[1,3,3,2] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  px = pred[1,5,5,3] parameter(2)
  pk = pred[3,3,3,2] parameter(3)
  b = s32[1,3,3,2] convolution(px, pk), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[1,3,3,2], s32[1,3,3,2]) tuple(a, b)
}
)");
  EXPECT_FALSE(run.changed) << run.after;
}

}  // namespace
}  // namespace hlogym::testing
