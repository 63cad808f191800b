// dce: dead instructions, side effects, control edges, dead computations,
// unused outputs of multi-output fusions.
#include "absl/strings/str_replace.h"
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DceTest, RemovesDeadChain) {
  PassRun run = RunPass("dce", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  dead1 = f32[4] exponential(p)
  dead2 = f32[4] negate(dead1)
  ROOT r = f32[4] add(p, p)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: parameter(0)
CHECK-NOT: exponential
CHECK-NOT: negate
CHECK: ROOT
)");
}

TEST(DceTest, KeepsSideEffectsAndParameters) {
  PassRun run = RunPass("dce", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  tok = token[] after-all()
  out = token[] outfeed(p, tok), outfeed_shape=f32[4]
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  ROOT c = f32[4] copy(p)
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: parameter(1)\nCHECK: outfeed\nCHECK: rng(");
}

TEST(DceTest, KeepsWhileWithSideEffectInBodyButRemovesPureOne) {
  PassRun run = RunPass("dce", R"(HloModule m
cond {
  c = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(c, ten), direction=LT
}
pure_body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT inc = s32[] add(b, one)
}
effect_body {
  e = s32[] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(e, t), outfeed_shape=s32[]
  one2 = s32[] constant(1)
  ROOT inc2 = s32[] add(e, one2)
}
ENTRY main {
  p = s32[] parameter(0)
  w1 = s32[] while(p), condition=cond, body=pure_body
  w2 = s32[] while(p), condition=cond, body=effect_body
  ROOT r = s32[] copy(p)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: pure_body
CHECK: effect_body
CHECK: ENTRY
CHECK-NOT: %w1 =
CHECK: %w2 = s32[] while(s32[] %p)
)");
}

TEST(DceTest, RemovesUncalledComputations) {
  PassRun run = RunPass("dce", R"(HloModule m
orphan {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: orphan\nCHECK: add_f32\nCHECK: reduce(");
}

TEST(DceTest, KeepsInstructionsWithControlEdges) {
  PassRun run = RunPass("dce", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  ROOT r = f32[4] exponential(p), control-predecessors={a}
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: negate");
}

TEST(DceTest, NoChangeOnLiveModule) {
  PassRun run = RunPass("dce", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  ROOT r = f32[4] add(e, p)
}
)");
  EXPECT_FALSE(run.changed);
}

// A multi-output fusion as XLA's optimized modules hold them (non-default
// layouts included): the output nobody reads leaves the fused root and the
// fusion's shape, the reads are renumbered, and what only that output used
// goes with it.
constexpr char kThreeOutputFusion[] = R"(HloModule m
fused {
  a = f32[2,3]{0,1} parameter(0)
  e = f32[2,3]{0,1} exponential(a)
  n = f32[2,3]{0,1} negate(a)
  t = f32[2,3]{0,1} tanh(a)
  ROOT out = (f32[2,3]{0,1}, f32[2,3]{0,1}, f32[2,3]{0,1}) tuple(e, n, t)
}
ENTRY main {
  p = f32[2,3]{0,1} parameter(0)
  f = (f32[2,3]{0,1}, f32[2,3]{0,1}, f32[2,3]{0,1}) fusion(p), kind=kLoop, calls=fused
  g0 = f32[2,3]{0,1} get-tuple-element(f), index=0
  g1 = f32[2,3]{0,1} get-tuple-element(f), index=1
  g2 = f32[2,3]{0,1} get-tuple-element(f), index=2
  ROOT r = f32[2,3]{0,1} add(g0, g2)
}
)";

TEST(DceTest, RemovesUnusedOutputsOfAMultiOutputFusion) {
  PassRun run = RunPass("dce", kThreeOutputFusion);
  ASSERT_TRUE(run.changed);
  ExpectSameSemantics(run);
  EXPECT_CHECKS(run.after, R"(
CHECK: exponential
CHECK-NOT: negate
CHECK: tanh
CHECK: ROOT {{.*}} = (f32[2,3]{0,1}, f32[2,3]{0,1}) tuple(
CHECK: = (f32[2,3]{0,1}, f32[2,3]{0,1}) fusion(
CHECK: %g0 = {{.*}} get-tuple-element({{.*}}), index=0
CHECK: %g2 = {{.*}} get-tuple-element({{.*}}), index=1
)");
  PassRun again = RunPass("dce", run.after);
  EXPECT_FALSE(again.changed);
}

TEST(DceTest, AFusionWithOneOutputLeftReturnsItWhole) {
  PassRun run = RunPass("dce", R"(HloModule m
fused {
  a = f32[4] parameter(0)
  e = f32[4] exponential(a)
  n = f32[4] negate(a)
  ROOT out = (f32[4], f32[4]) tuple(e, n)
}
ENTRY main {
  p = f32[4] parameter(0)
  f = (f32[4], f32[4]) fusion(p), kind=kLoop, calls=fused
  g1 = f32[4] get-tuple-element(f), index=1
  ROOT r = f32[4] multiply(g1, g1)
}
)");
  ASSERT_TRUE(run.changed);
  ExpectSameSemantics(run);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: exponential
CHECK: ROOT {{.*}} = f32[4]{{.*}} negate(
CHECK: %f = f32[4]{{.*}} fusion(
CHECK-NOT: get-tuple-element
CHECK: multiply({{.*}}%f, {{.*}}%f)
)");
}

TEST(DceTest, KeepsFusionOutputsWhenAUserReadsTheWholeTuple) {
  const std::string module = absl::StrReplaceAll(
      kThreeOutputFusion, {{"ROOT r = f32[2,3]{0,1} add(g0, g2)",
                            "a = f32[2,3]{0,1} add(g0, g2)\n  ROOT r = ((f32[2,3]{0,1}, "
                            "f32[2,3]{0,1}, f32[2,3]{0,1}), f32[2,3]{0,1}) tuple(f, a)"}});
  PassRun run = RunPass("dce", module);
  EXPECT_CHECKS(run.after, "CHECK: negate\nCHECK: tuple({{.*}}e, {{.*}}n, {{.*}}t)");
}

}  // namespace
}  // namespace hlogym::testing
