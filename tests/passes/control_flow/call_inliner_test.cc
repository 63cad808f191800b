// call-inliner: inlining calls (nested, multiple sites, single-site variant).
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kTwoCalls = R"(HloModule m
square {
  x = f32[4] parameter(0)
  ROOT m = f32[4] multiply(x, x)
}
plus_one {
  y = f32[4] parameter(0)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  s = f32[4] call(y), to_apply=square
  ROOT a = f32[4] add(s, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=plus_one
  c2 = f32[4] call(c1), to_apply=square
  ROOT r = f32[4] negate(c2)
}
)";

TEST(CallInlinerTest, InlinesNestedCallsAndDropsCallees) {
  PassRun run = RunPass("call-inliner", kTwoCalls);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY %main
CHECK-NOT: call(
CHECK: multiply(f32[4] %p, f32[4] %p)
CHECK: add(
CHECK: multiply(
CHECK: ROOT %r = f32[4] negate(
)");
  EXPECT_EQ(run.module->computation_count(), 1);
}

TEST(CallInlinerTest, SingleCallSiteVariantSkipsSharedCallees) {
  PassRun run = RunPass("call-inliner-single-call-site", kTwoCalls);
  EXPECT_TRUE(run.changed);
  // plus_one has one call site and is inlined; square has two and stays.
  EXPECT_CHECKS(run.after, R"(
CHECK: %square
CHECK-NOT: plus_one
CHECK: ENTRY %main
CHECK: call({{.*}}to_apply=%square
CHECK: call({{.*}}to_apply=%square
)");
}

TEST(CallInlinerTest, CalleeReturningParameter) {
  PassRun run = RunPass("call-inliner", R"(HloModule m
identity {
  x = f32[4] parameter(0)
  ROOT y = f32[4] parameter(1)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT c = f32[4] call(p, q), to_apply=identity
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK: ROOT %q = f32[4] parameter(1)");
}

TEST(CallInlinerTest, NoCallsNoChange) {
  PassRun run = RunPass("call-inliner", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
