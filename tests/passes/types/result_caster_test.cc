// result_caster: narrow-result dots/convolutions computed wide, then converted.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ResultCasterTest, ComputesDotInOperandTypeThenConverts) {
  PassRun run = RunPass("result_caster", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %dot = f32[2,4] dot(f32[2,3] %a, f32[3,4] %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: ROOT {{.*}} = bf16[2,4] convert(f32[2,4] %dot
CHECK-NOT: bf16[2,4] dot
)");
  ExpectSameSemantics(run);
}

TEST(ResultCasterTest, MixedOperandsUseTheWiderOne) {
  PassRun run = RunPass("result_caster", R"(HloModule m
ENTRY main {
  a = s32[4] parameter(0)
  b = s8[4] parameter(1)
  ROOT d = s8[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] dot(s32[4] %a, s8[4] %b)
CHECK: ROOT {{.*}} = s8[] convert(
)");
}

TEST(ResultCasterTest, ConvolutionToNarrowerType) {
  PassRun run = RunPass("result_caster", R"(HloModule m
ENTRY main {
  x = f32[1,5,2] parameter(0)
  w = f32[3,2,2] parameter(1)
  ROOT c = f16[1,3,2] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[1,3,2] convolution(f32[1,5,2] %x, f32[3,2,2] %w), window={size=3}, dim_labels=b0f_0io->b0f
CHECK: ROOT {{.*}} = f16[1,3,2] convert(
)");
  ExpectSameSemantics(run);
}

TEST(ResultCasterTest, LeavesWideningAndSameTypeDotsAlone) {
  PassRun run = RunPass("result_caster", R"(HloModule m
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  wide = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  same = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,4], bf16[2,4]) tuple(wide, same)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
