// select_and_scatter_expander: select-and-scatter -> reduce-window + scatter.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kMaxPoolGrad[] = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,6,5] parameter(0)
  g = f32[2,3,3] parameter(1)
  zero = f32[] constant(0)
  ROOT sas = f32[2,6,5] select-and-scatter(x, g, zero), window={size=1x3x2 stride=1x2x2 pad=0_0x0_1x0_1}, select=ge, scatter=add
}
)";

TEST(SelectAndScatterExpanderTest, ExpandsIntoReduceWindowAndScatter) {
  PassRun run = RunPass("select_and_scatter_expander", kMaxPoolGrad);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ge.reduce_window
CHECK: compare({{.*}}), direction=GE
CHECK: compare({{.*}}), direction=NE
CHECK: ROOT {{.*}} (f32[], s32[], s32[], s32[]) tuple(
CHECK: ENTRY
CHECK: f32[2,6,5] broadcast(f32[] %zero)
CHECK: s32[2,6,5] iota(), iota_dimension=0
CHECK: s32[2,6,5] iota(), iota_dimension=2
CHECK: s32[] constant(-1)
CHECK: (f32[2,3,3], s32[2,3,3], s32[2,3,3], s32[2,3,3]) reduce-window({{.*}}), window={size=1x3x2 stride=1x2x2 pad=0_0x0_1x0_1}, to_apply=%ge.reduce_window
CHECK: s32[2,3,3,1] reshape(
CHECK: s32[2,3,3,3] concatenate({{.*}}), dimensions={3}
CHECK: ROOT {{.*}} scatter({{.*}}), update_window_dims={}, inserted_window_dims={0,1,2}, scatter_dims_to_operand_dims={0,1,2}, index_vector_dim=3, to_apply=%add
CHECK-NOT: select-and-scatter
)");
  ExpectSameSemantics(run, 5);
}

TEST(SelectAndScatterExpanderTest, AllPaddingWindowsAreDropped) {
  // The last window of dimension 0 covers only padding.
  PassRun run = RunPass("select_and_scatter_expander", R"(HloModule m
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] multiply(a, b)
}
ENTRY main {
  x = s32[4] parameter(0)
  g = s32[3] parameter(1)
  one = s32[] constant(1)
  ROOT sas = s32[4] select-and-scatter(x, g, one), window={size=2 stride=2 pad=0_2}, select=gt, scatter=mul
}
)");
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, 5);
}

TEST(SelectAndScatterExpanderTest, NoSelectAndScatterNoChange) {
  PassRun run = RunPass("select_and_scatter_expander", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
