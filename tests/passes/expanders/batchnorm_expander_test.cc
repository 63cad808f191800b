// batchnorm_expander: batch-norm ops as elementwise ops and reduces.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(BatchNormExpanderTest, ExpandsTraining) {
  PassRun run = RunPass("batchnorm_expander", R"(HloModule m
ENTRY main {
  x = f32[4,3,2] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT bn = (f32[4,3,2], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %scalar_add_computation
CHECK: ENTRY
CHECK: f32[3] reduce(f32[4,3,2] %x, {{.*}}), dimensions={0,2}, to_apply=%scalar_add_computation
CHECK: get-dimension-size(f32[4,3,2] %x), dimensions={2}
CHECK: get-dimension-size(f32[4,3,2] %x), dimensions={0}
CHECK: f32[] convert(s32[]
CHECK: rsqrt(
CHECK: ROOT {{.*}} = (f32[4,3,2], f32[3], f32[3]) tuple(
CHECK-NOT: batch-norm
)");
  ExpectSameSemantics(run);
}

TEST(BatchNormExpanderTest, ExpandsInference) {
  PassRun run = RunPass("batchnorm_expander", R"(HloModule m
ENTRY main {
  x = f32[2,5] parameter(0)
  scale = f32[5] parameter(1)
  offset = f32[5] parameter(2)
  mean = f32[5] parameter(3)
  var = f32[5] parameter(4)
  ROOT bn = f32[2,5] batch-norm-inference(x, scale, offset, mean, abs_var), epsilon=0.01, feature_index=1
  abs_var = f32[5] abs(var)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[] constant(0.01)
CHECK: rsqrt(
CHECK: multiply(f32[5] %scale
CHECK: f32[2,5] broadcast({{.*}}), dimensions={1}
CHECK: ROOT {{.*}} = f32[2,5] add(
CHECK-NOT: reduce(
)");
  ExpectSameSemantics(run);
}

TEST(BatchNormExpanderTest, ExpandsGrad) {
  PassRun run = RunPass("batchnorm_expander", R"(HloModule m
ENTRY main {
  x = f32[3,4] parameter(0)
  scale = f32[3] parameter(1)
  mean = f32[3] parameter(2)
  var = f32[3] parameter(3)
  dy = f32[3,4] parameter(4)
  abs_var = f32[3] abs(var)
  ROOT bn = (f32[3,4], f32[3], f32[3]) batch-norm-grad(x, scale, mean, abs_var, dy), epsilon=0.001, feature_index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: get-dimension-size(f32[3,4] %x), dimensions={1}
CHECK: f32[3] reduce(f32[3,4] %dy, {{.*}}), dimensions={1}
CHECK: reduce({{.*}}), dimensions={1}
CHECK: ROOT {{.*}} tuple(
CHECK-NOT: batch-norm
)");
  ExpectSameSemantics(run);
}

TEST(BatchNormExpanderTest, NoBatchNormNoChange) {
  PassRun run = RunPass("batchnorm_expander", R"(HloModule m
ENTRY main {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
