// while-loop-constant-sinking: constants copied into bodies and conditions.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kLoop[] = R"(HloModule m
body {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  k = f32[4] get-tuple-element(p), index=2
  a = f32[4] add(v, k)
  n = s32[] get-tuple-element(p), index=3
  ROOT t = (s32[], f32[4], f32[4], s32[]) tuple(next, a, k, n)
}
cond {
  p = (s32[], f32[4], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  k = f32[4] constant({1, 2, 3, 4})
  n = s32[] constant(5)
  init = (s32[], f32[4], f32[4], s32[]) tuple(zero, x, k, n)
  ROOT loop = (s32[], f32[4], f32[4], s32[]) while(init), condition=cond, body=body
}
)";

TEST(WhileLoopConstantSinkingTest, SinksIntoBodyAndCondition) {
  PassRun run = RunPass("while-loop-constant-sinking", kLoop);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %cond.sunk
CHECK: %n{{[.0-9a-z]*}} = s32[] constant(5)
CHECK: compare(s32[] %i{{[.0-9a-z]*}}, s32[] %n{{[.0-9a-z]*}})
CHECK: %body.sunk
CHECK: %k{{[.0-9a-z]*}} = f32[4] constant({1, 2, 3, 4})
CHECK: ROOT %t{{[.0-9a-z]*}} = {{.*}} tuple({{.*}}, f32[4] %k{{[.0-9a-z]*}}, s32[] %n{{[.0-9a-z]*}})
)");
  ExpectSameSemantics(run);
}

// As the pinned XLA does (read from its pass dumps of a JAX fori_loop whose bound XLA folds to a
// constant): the constant sinks into a copy of the condition, "cond.sunk", which replaces the
// original; the read of the element it replaced goes with it; the body, where nothing sank, stays.
// The copy joins the module last, which decides when simplify-while-loops visits loops inside it.
TEST(WhileLoopConstantSinkingTest, SinksIntoACopyOfWhatItChanges) {
  PassRun run = RunPass("while-loop-constant-sinking", R"(HloModule m
body {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  e = f32[4] tanh(v)
  n = s32[] get-tuple-element(p), index=2
  ROOT t = (s32[], f32[4], s32[]) tuple(next, e, n)
}
cond {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  n = s32[] constant(10)
  init = (s32[], f32[4], s32[]) tuple(zero, x, n)
  w = (s32[], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %cond (
CHECK: %body (
CHECK: %cond.sunk (
CHECK-NEXT: parameter(0)
CHECK-NEXT: get-tuple-element({{.*}}), index=0
CHECK-NEXT: s32[] constant(10)
CHECK-NEXT: ROOT {{.*}} compare(
CHECK: ENTRY
CHECK: while({{.*}}), condition=%cond.sunk, body=%body
)");
  // As in XLA's dump, the count stays: the constant comes in, the read it replaced goes.
  EXPECT_EQ(run.module->instruction_count(), 18);
  ExpectSameSemantics(run);
}

// XLA walks the loops from the entry down, so a constant sunk into an outer body, where it feeds
// the init of a loop inside, sinks into that loop's body in the same run (seen in the pinned
// XLA's dumps of TensorFlow Probability's HMC chain, whose leapfrog loop sits in the sampler's).
TEST(WhileLoopConstantSinkingTest, AConstantSunkIntoAnOuterBodySinksIntoTheLoopInside) {
  PassRun run = RunPass("while-loop-constant-sinking", R"(HloModule m
inner_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  k = f32[4] get-tuple-element(p), index=2
  a = f32[4] multiply(v, k)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, a, k)
}
inner_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
outer_body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  k = f32[4] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  inner_init = (s32[], f32[4], f32[4]) tuple(zero, v, k)
  inner = (s32[], f32[4], f32[4]) while(inner_init), condition=inner_cond, body=inner_body
  w = f32[4] get-tuple-element(inner), index=1
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, w, k)
}
outer_cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(i, two), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  k = f32[4] constant({1, 2, 3, 4})
  init = (s32[], f32[4], f32[4]) tuple(zero, x, k)
  outer = (s32[], f32[4], f32[4]) while(init), condition=outer_cond, body=outer_body
  ROOT r = f32[4] get-tuple-element(outer), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %inner_body (
CHECK: %inner_body.sunk (
CHECK: f32[4] constant({1, 2, 3, 4})
CHECK: multiply(
CHECK-NOT: %outer_body (
CHECK: %outer_body.sunk (
CHECK: f32[4] constant({1, 2, 3, 4})
CHECK: while({{.*}}), condition=%inner_cond, body=%inner_body.sunk
)");
  ExpectSameSemantics(run);
}

// A body that only passes the element through, even at two places of its root, keeps it: XLA
// sinks where the read has a user beside the root.
TEST(WhileLoopConstantSinkingTest, AReadOnlyTheRootUsesStays) {
  PassRun run = RunPass("while-loop-constant-sinking", R"(HloModule m
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  k = f32[4] get-tuple-element(p), index=2
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, k, k)
}
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  ROOT lt = pred[] compare(i, two), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  k = f32[4] constant({1, 2, 3, 4})
  init = (s32[], f32[4], f32[4]) tuple(zero, x, k)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)");
  EXPECT_FALSE(run.changed);
}

// As XLA's run ends, computations nothing reaches go, with or without a loop to sink into.
TEST(WhileLoopConstantSinkingTest, UnreachableComputationsGo) {
  PassRun run = RunPass("while-loop-constant-sinking", R"(HloModule m
unused {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: %unused");
}

TEST(WhileLoopConstantSinkingTest, NoChangeWithoutConstants) {
  std::string hlo = kLoop;
  hlo.replace(hlo.find("k = f32[4] constant({1, 2, 3, 4})"),
              std::string("k = f32[4] constant({1, 2, 3, 4})").size(), "k = f32[4] parameter(1)");
  hlo.replace(hlo.find("n = s32[] constant(5)"), std::string("n = s32[] constant(5)").size(),
              "n = s32[] parameter(2)");
  PassRun run = RunPass("while-loop-constant-sinking", hlo);
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
