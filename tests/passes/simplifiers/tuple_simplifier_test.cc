// tuple-simplifier: gte(tuple) forwarding and whole-tuple collapsing.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(TupleSimplifierTest, ForwardsGetTupleElementOfTuple) {
  PassRun run = RunPass("tuple-simplifier", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = s32[] parameter(1)
  t = (f32[4], s32[]) tuple(p, q)
  g = f32[4] get-tuple-element(t), index=0
  ROOT r = f32[4] negate(g)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: tuple(\nCHECK: ROOT %r = f32[4] negate(f32[4] %p)");
}

TEST(TupleSimplifierTest, ForwardsThroughNestedTuples) {
  PassRun run = RunPass("tuple-simplifier", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = s32[] parameter(1)
  inner = (f32[4], s32[]) tuple(p, q)
  outer = ((f32[4], s32[]), s32[]) tuple(inner, q)
  g0 = (f32[4], s32[]) get-tuple-element(outer), index=0
  g1 = s32[] get-tuple-element(g0), index=1
  ROOT r = s32[] negate(g1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: get-tuple-element\nCHECK: ROOT %r = s32[] negate(s32[] %q)");
}

TEST(TupleSimplifierTest, CollapsesTupleOfAllElements) {
  PassRun run = RunPass("tuple-simplifier", R"(HloModule m
ENTRY main {
  p = (f32[4], s32[]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[4], s32[]) tuple(a, b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ROOT %p = (f32[4], s32[]) parameter(0)\nCHECK-NOT: tuple(");
}

TEST(TupleSimplifierTest, KeepsPermutedOrPartialTuples) {
  PassRun run = RunPass("tuple-simplifier", R"(HloModule m
ENTRY main {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4] get-tuple-element(p), index=1
  swapped = (f32[4], f32[4]) tuple(b, a)
  partial = (f32[4]) tuple(a)
  ROOT t = ((f32[4], f32[4]), (f32[4])) tuple(swapped, partial)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
