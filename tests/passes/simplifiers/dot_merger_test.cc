// dot-merger: independent dots sharing an operand merged into one.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DotMergerTest, MergesDotsSharingLhs) {
  PassRun run = RunPass("dot-merger", R"(HloModule m
ENTRY main {
  x = f32[8,4] parameter(0)
  y = f32[4,3] parameter(1)
  z = f32[4,5] parameter(2)
  d0 = f32[8,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[8,5] dot(x, z), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,3], f32[8,5]) tuple(d0, d1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[4,8] concatenate(f32[4,3] %y, f32[4,5] %z), dimensions={1}
CHECK: f32[8,8] dot(f32[8,4] %x, f32[4,8] {{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: f32[8,3] slice({{.*}}), slice={[0:8], [0:3]}
CHECK: f32[8,5] slice({{.*}}), slice={[0:8], [3:8]}
CHECK-NOT: %d0 =
CHECK-NOT: %d1 =)");
}

TEST(DotMergerTest, MergesDotsSharingRhs) {
  PassRun run = RunPass("dot-merger", R"(HloModule m
ENTRY main {
  w = f32[4,6] parameter(0)
  a = f32[2,4] parameter(1)
  b = f32[3,4] parameter(2)
  d0 = f32[2,6] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[3,6] dot(b, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,6], f32[3,6]) tuple(d0, d1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[5,4] concatenate(f32[2,4] %a, f32[3,4] %b), dimensions={0}
CHECK: f32[5,6] dot(
CHECK: f32[2,6] slice({{.*}}), slice={[0:2], [0:6]}
CHECK: f32[3,6] slice({{.*}}), slice={[2:5], [0:6]})");
}

TEST(DotMergerTest, KeepsDependentOrMismatchedDots) {
  PassRun run = RunPass("dot-merger", R"(HloModule m
ENTRY main {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  h = f16[4,4] parameter(2)
  d0 = f32[4,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[4,4] dot(x, d0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[4,4] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[4,4], f32[4,4]) tuple(d1, d2)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
