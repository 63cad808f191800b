// convolution_4d_expander: trivial spatial dimensions of convolutions with
// four spatial dimensions are reshaped away.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(Convolution4DExpanderTest, DropsTwoTrivialDimensions) {
  PassRun run = RunPass("convolution_4d_expander", R"(HloModule m
ENTRY main {
  x = f32[1,6,1,5,3,4] parameter(0)
  k = f32[4,1,2,1,3,2] parameter(1)
  ROOT c = f32[2,1,5,1,3,3] convolution(x, k), dim_labels=0123bf_i0123o->f0123b, window={size=1x2x1x3}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[6,5,3,4] reshape(f32[1,6,1,5,3,4] %x)
CHECK: f32[4,2,3,2] reshape(f32[4,1,2,1,3,2] %k)
CHECK: f32[2,5,3,3] convolution({{.*}}), window={size=2x3}, dim_labels=01bf_i01o->f01b
CHECK: ROOT {{.*}} = f32[2,1,5,1,3,3] reshape(f32[2,5,3,3]
)");
  ExpectSameSemantics(run);
}

TEST(Convolution4DExpanderTest, PaddedSizeOneDimensionStays) {
  // Spatial dimension 2 has size 1 but low padding: it stays.
  PassRun run = RunPass("convolution_4d_expander", R"(HloModule m
ENTRY main {
  x = f32[1,6,1,5,3,4] parameter(0)
  k = f32[4,1,2,1,3,2] parameter(1)
  ROOT c = f32[2,1,5,2,3,3] convolution(x, k), dim_labels=0123bf_i0123o->f0123b, window={size=1x2x1x3 pad=0_0x0_0x1_0x0_0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[6,1,5,3,4] reshape(
CHECK: f32[2,5,2,3,3] convolution({{.*}}), window={size=2x1x3 pad=0_0x1_0x0_0}, dim_labels=012bf_i012o->f012b
)");
  ExpectSameSemantics(run);
}

TEST(Convolution4DExpanderTest, AllTrivialToZeroSpatialDimensions) {
  PassRun run = RunPass("convolution_4d_expander", R"(HloModule m
ENTRY main {
  x = f32[2,1,1,1,1,3] parameter(0)
  k = f32[1,1,1,1,3,4] parameter(1)
  c = f32[2,1,1,1,1,4] convolution(x, k), dim_labels=b0123f_0123io->b0123f, window={size=1x1x1x1 stride=2x1x1x3}, feature_group_count=1
  ROOT n = f32[2,1,1,1,1,4] negate(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,3] reshape(
CHECK: f32[3,4] reshape(
CHECK: f32[2,4] convolution({{.*}}dim_labels=bf_io->bf
CHECK: f32[2,1,1,1,1,4] reshape(
CHECK: ROOT {{.*}} negate(
)");
  ExpectSameSemantics(run);
}

TEST(Convolution4DExpanderTest, KeepsFeatureGroups) {
  PassRun run = RunPass("convolution_4d_expander", R"(HloModule m
ENTRY main {
  x = f32[2,4,1,1,3,4]{5,4,3,2,1,0} parameter(0)
  k = f32[2,1,1,2,2,4]{5,4,3,2,1,0} parameter(1)
  ROOT c = f32[2,3,1,1,2,4]{5,4,3,2,1,0} convolution(x, k), dim_labels=b0123f_0123io->b0123f, window={size=2x1x1x2}, feature_group_count=2
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,3,2,4]{3,2,1,0} convolution({{.*}}), window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
CHECK: ROOT {{.*}} = f32[2,3,1,1,2,4]{5,4,3,2,1,0} reshape(
)");
  ExpectSameSemantics(run);
}

TEST(Convolution4DExpanderTest, NoChangeCases) {
  for (const char* hlo : {// Three spatial dimensions.
                          R"(HloModule m
ENTRY main {
  x = f32[1,1,1,5,2] parameter(0)
  k = f32[2,1,1,1,3] parameter(1)
  ROOT c = f32[3,1,1,1,5] convolution(x, k), dim_labels=012bf_i012o->f012b, window={size=1x1x1}
}
)",
                          // No size-1 spatial input dimension.
                          R"(HloModule m
ENTRY main {
  x = f32[2,6,2,5,3,4] parameter(0)
  k = f32[4,2,2,2,3,2] parameter(1)
  ROOT c = f32[2,1,5,1,3,3] convolution(x, k), dim_labels=0123bf_i0123o->f0123b, window={size=2x2x2x3}
}
)",
                          // Size-1 dimensions, but padded.
                          R"(HloModule m
ENTRY main {
  x = f32[1,6,1,5,3,4] parameter(0)
  k = f32[4,1,2,1,3,2] parameter(1)
  ROOT c = f32[2,1,5,1,3,3] convolution(x, k), dim_labels=0123bf_i0123o->f0123b, window={size=1x2x1x3 stride=2x1x2x1 pad=1_0x0_0x0_1x0_0}
}
)",
                          // A plain 2-D convolution.
                          R"(HloModule m
ENTRY main {
  x = f32[1,1,5,3] parameter(0)
  k = f32[1,3,3,2] parameter(1)
  ROOT c = f32[1,1,3,2] convolution(x, k), dim_labels=b01f_01io->b01f, window={size=1x3}
}
)"}) {
    PassRun run = RunPass("convolution_4d_expander", hlo);
    EXPECT_FALSE(run.changed) << run.after;
  }
}

TEST(Convolution4DExpanderTest, MalformedConvolutionIsAnErrorNamingIt) {
  // Dimension numbers that point past the input's rank.
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  x = f32[1,6,1,5,3] parameter(0)
  k = f32[4,1,2,1,3,2] parameter(1)
  ROOT bad.conv = f32[2,1,5,1,3,3] convolution(x, k), dim_labels=0123bf_i0123o->f0123b, window={size=1x2x1x3}
}
)",
                            "bad.hlo");
  if (!module.ok()) GTEST_SKIP() << "the parser already rejects it: " << module.status();
  auto pass = PassRegistry::Builtin().Create("convolution_4d_expander");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad.conv"), std::string::npos) << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
