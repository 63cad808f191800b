// convolution-canonicalization: convolutions Eigen cannot run get NHWC/HWIO
// transposes around a canonical convolution.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConvolutionCanonicalizationTest, NchwConvolutionIsTransposed) {
  PassRun run = RunPass("convolution-canonicalization", R"(HloModule m
ENTRY main {
  x = f32[2,3,8,8] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  ROOT c = f32[2,4,6,6] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,8,8,3] transpose(f32[2,3,8,8] %x), dimensions={0,2,3,1}
CHECK: f32[3,3,3,4] transpose(f32[4,3,3,3] %k), dimensions={2,3,1,0}
CHECK: f32[2,6,6,4] convolution({{.*}}), window={size=3x3}, dim_labels=b01f_01io->b01f
CHECK: ROOT {{.*}} f32[2,4,6,6] transpose({{.*}}), dimensions={0,3,1,2}
)");
  EXPECT_EQ(run.module->instruction_count(), 6);
  ExpectSameSemantics(run);
}

TEST(ConvolutionCanonicalizationTest, Bf16AndTinyConvolutionsAreRewrittenEvenWhenCanonical) {
  for (const char* hlo : {R"(HloModule m
ENTRY main {
  x = bf16[2,8,8,3] parameter(0)
  k = bf16[3,3,3,4] parameter(1)
  ROOT c = bf16[2,6,6,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)",
                          R"(HloModule m
ENTRY main {
  x = f32[1,2,1] parameter(0)
  k = f32[1,1,1] parameter(1)
  ROOT c = f32[1,2,1] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f
}
)"}) {
    PassRun run = RunPass("convolution-canonicalization", hlo);
    EXPECT_TRUE(run.changed) << hlo;
    EXPECT_EQ(run.module->instruction_count(), 6);
    ExpectSameSemantics(run);
  }
}

TEST(ConvolutionCanonicalizationTest, EigenConvolutionNoChange) {
  PassRun run = RunPass("convolution-canonicalization", R"(HloModule m
ENTRY main {
  x = f32[2,8,8,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,6,6,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
