// convolution-group-converter: batch groups (CPU's first instance) and
// feature groups outside F16/F32 (its second instance).
#include "passes/control_flow_test_util.h"
#include "passes/registry.h"

namespace hlogym::testing {
namespace {

TEST(ConvolutionGroupConverterTest, BatchGroupsOnePerGroupAreMasked) {
  PassRun run = RunPass("convolution-group-converter", R"(HloModule m
ENTRY main {
  x = f32[2,5,5,3] parameter(0)
  k = f32[3,3,3,2] parameter(1)
  ROOT c = f32[1,3,3,2] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: add_computation
CHECK: s32[2] constant({0, 1})
CHECK: pred[2,3,3,2] compare({{.*}}), direction=EQ
CHECK: f32[2,3,3,2] convolution(f32[2,5,5,3] %x, f32[3,3,3,2] %k), window={size=3x3}, dim_labels=b01f_01io->b01f
CHECK: f32[2,3,3,2] select(
CHECK: f32[1,3,3,2] reduce-window({{.*}}), window={size=2x1x1x1 stride=2x1x1x1}, to_apply=%add_computation
CHECK: ROOT {{.*}} f32[1,3,3,2] convert(
)");
  EXPECT_EQ(run.after.find("batch_group_count"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(ConvolutionGroupConverterTest, BatchGroupsSplitIntoSpatialDimension) {
  PassRun run = RunPass("convolution-group-converter", R"(HloModule m
ENTRY main {
  x = f32[4,5,5,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,2,5,5,3] reshape(f32[4,5,5,3] %x)
CHECK: f32[3,3,3,2,2] reshape(f32[3,3,3,4] %k)
CHECK: convolution({{.*}}), window={size=3x3x2 lhs_dilate=1x1x2}
CHECK: ROOT {{.*}} f32[2,3,3,4] reshape(
)");
  EXPECT_EQ(run.after.find("batch_group_count"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(ConvolutionGroupConverterTest, DepthwiseF64FilterIsExpanded) {
  PassRun run = RunPass("convolution-group-converter-feature-groups", R"(HloModule m
ENTRY main {
  x = f64[1,5,5,4] parameter(0)
  k = f64[3,3,1,8] parameter(1)
  ROOT c = f64[1,3,3,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[8] constant({0, 0, 1, 1, 2, 2, 3, 3})
CHECK: f64[3,3,8] reshape(f64[3,3,1,8] %k)
CHECK: f64[3,3,4,8] broadcast({{.*}}), dimensions={0,1,3}
CHECK: f64[3,3,4,8] select(
CHECK: ROOT {{.*}} f64[1,3,3,8] convolution(f64[1,5,5,4] %x, {{.*}}), window={size=3x3}, dim_labels=b01f_01io->b01f
)");
  EXPECT_EQ(run.after.find("feature_group_count"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(ConvolutionGroupConverterTest, GroupedF64SplitIntoSpatialDimension) {
  PassRun run = RunPass("convolution-group-converter-feature-groups", R"(HloModule m
ENTRY main {
  x = f64[2,5,5,4] parameter(0)
  k = f64[3,3,2,6] parameter(1)
  ROOT c = f64[2,4,4,6] convolution(x, k), window={size=3x3 pad=1_0x0_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f64[2,5,5,2,2] reshape(f64[2,5,5,4] %x)
CHECK: f64[3,3,2,2,3] reshape(f64[3,3,2,6] %k)
CHECK: convolution({{.*}}), window={size=3x3x2 pad=1_0x0_1x0_0 lhs_dilate=1x1x2}
CHECK: ROOT {{.*}} f64[2,4,4,6] reshape(
)");
  ExpectSameSemantics(run);
}

TEST(ConvolutionGroupConverterTest, NoChangeCases) {
  // F32 feature groups stay for the feature-group instance; the batch-group
  // instance ignores feature groups.
  const char* hlo = R"(HloModule m
ENTRY main {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,2,6] parameter(1)
  ROOT c = f32[1,3,3,6] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
)";
  EXPECT_FALSE(RunPass("convolution-group-converter-feature-groups", hlo).changed);
  EXPECT_FALSE(RunPass("convolution-group-converter", hlo).changed);
}

// In xla-cpu-default a bf16 depthwise convolution is widened to f32 first and
// stays grouped; xla-cpu-default-exact keeps it bf16 and must leave it grouped
// too (expanded, it ran 3.1x slower on XLA:CPU, a keras ConvNeXt).
TEST(ConvolutionGroupConverterTest, DefaultPipelinesKeepBf16DepthwiseGrouped) {
  const char* hlo = R"(HloModule m
ENTRY main {
  x = bf16[1,5,5,4] parameter(0)
  k = bf16[3,3,1,4] parameter(1)
  ROOT c = bf16[1,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
}
)";
  EXPECT_TRUE(RunPass("convolution-group-converter-feature-groups", hlo).changed);
  for (const char* name : {"xla-cpu-default", "xla-cpu-default-exact"}) {
    SCOPED_TRACE(name);
    auto pipeline = PassRegistry::WithPipelines().Create(name);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    PassRun run = RunPass(**pipeline, hlo);
    EXPECT_CHECKS(run.after, R"(
CHECK: convolution({{.*}}), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
)");
    EXPECT_EQ(run.after.find("select("), std::string::npos);
  }
}

}  // namespace
}  // namespace hlogym::testing
