// slice-sinker: elementwise ops on slices become one op on the sources.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(SliceSinkerTest, MergesOpsOnAdjacentSlices) {
  PassRun run = RunPass("slice-sinker", R"(HloModule m
ENTRY main {
  p = f32[10] parameter(0)
  q = f32[10] parameter(1)
  a = f32[6] slice(p), slice={[0:6]}
  b = f32[6] slice(q), slice={[0:6]}
  c = f32[4] slice(p), slice={[6:10]}
  d = f32[4] slice(q), slice={[6:10]}
  x = f32[6] add(a, b)
  y = f32[4] add(c, d)
  ROOT t = (f32[6], f32[4]) tuple(x, y)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[10] add(f32[10] %p, f32[10] %q)
CHECK: f32[6] slice(
CHECK: f32[4] slice(
CHECK: ROOT %t = (f32[6], f32[4]) tuple(f32[6] %{{slice.*}}, f32[4] %{{slice.*}}))");
}

TEST(SliceSinkerTest, KeepsGroupsCoveringLessThanTheSource) {
  PassRun run = RunPass("slice-sinker", R"(HloModule m
ENTRY main {
  p = f32[10] parameter(0)
  a = f32[3] slice(p), slice={[0:3]}
  c = f32[4] slice(p), slice={[6:10]}
  x = f32[3] negate(a)
  y = f32[4] negate(c)
  z = f32[4] exponential(c)
  ROOT t = (f32[3], f32[4], f32[4]) tuple(x, y, z)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
