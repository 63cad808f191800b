// computation-deduplicator: equal computations merged.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ComputationDeduplicatorTest, MergesEqualComputations) {
  PassRun run = RunPass("computation-deduplicator", R"(HloModule m
add_a {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
add_b {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = f32[] add(x, y)
}
max_c {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT w = f32[] maximum(u, v)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r0 = f32[] reduce(p, z), dimensions={0}, to_apply=add_a
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add_b
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=max_c
  ROOT t = (f32[], f32[], f32[]) tuple(r0, r1, r2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 3);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %add_b
CHECK: ENTRY
CHECK: to_apply=%add_a
CHECK: to_apply=%add_a
CHECK: to_apply=%max_c
)");
}

TEST(ComputationDeduplicatorTest, DifferentComputationsStay) {
  PassRun run = RunPass("computation-deduplicator", R"(HloModule m
add_a {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sub_b {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT t = f32[] subtract(x, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r0 = f32[] reduce(p, z), dimensions={0}, to_apply=add_a
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=sub_b
  ROOT t = (f32[], f32[]) tuple(r0, r1)
}
)");
  EXPECT_FALSE(run.changed);
}

// A shape written without a layout has the default one, as XLA's parser gives it: a computation
// read without layouts equals one with default layouts (one a pass built, say), and not one with
// another layout.
TEST(ComputationDeduplicatorTest, MissingLayoutsAreTheDefaultOnes) {
  PassRun run = RunPass("computation-deduplicator", R"(HloModule m
neg_plain {
  a = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(a)
}
neg_default {
  b = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{1,0} negate(b)
}
neg_column_major {
  c = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(c)
}
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  q = f32[2,3]{0,1} parameter(1)
  x = f32[2,3]{1,0} call(p), to_apply=neg_plain
  y = f32[2,3]{1,0} call(p), to_apply=neg_default
  z = f32[2,3]{0,1} call(q), to_apply=neg_column_major
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(x, y, z)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->computation_count(), 3);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %neg_default
CHECK: ENTRY
CHECK: to_apply=%neg_plain
CHECK: to_apply=%neg_plain
CHECK: to_apply=%neg_column_major)");
}

}  // namespace
}  // namespace hlogym::testing
