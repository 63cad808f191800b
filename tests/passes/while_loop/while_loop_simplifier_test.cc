// simplify-while-loops: dead loop state, constant elements, 0/1-trip loops.
#include "passes/control_flow_test_util.h"
#include "passes/registry.h"
#include "text/parser.h"
#include "text/printer.h"

namespace hlogym::testing {
namespace {

// A counted loop (i from 0 while i < N) carrying an accumulator, an unused
// element and a pass-through constant.
std::string CountedLoop(int bound, int start = 0) {
  return R"(HloModule m
body {
  p = (s32[], f32[4], f32[4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  acc = f32[4] get-tuple-element(p), index=1
  junk = f32[4] get-tuple-element(p), index=2
  junk2 = f32[4] multiply(junk, junk)
  scale = f32[] get-tuple-element(p), index=3
  b = f32[4] broadcast(scale), dimensions={}
  acc2 = f32[4] add(acc, b)
  ROOT t = (s32[], f32[4], f32[4], f32[]) tuple(next, acc2, junk2, scale)
}
cond {
  p = (s32[], f32[4], f32[4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant()" +
         std::to_string(bound) + R"()
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  zero = s32[] constant()" +
         std::to_string(start) + R"()
  c = f32[] constant(0.5)
  init = (s32[], f32[4], f32[4], f32[]) tuple(zero, x, y, c)
  w = (s32[], f32[4], f32[4], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";
}

// Runs until nothing changes, as the pipeline's fixed point does: XLA removes dead elements before
// it propagates constants, and a removal ends that loop's turn, so a loop with a dead element and
// a constant one (or a dead element and a trip count of 0 or 1) needs more than one run.
PassRun RunUntilUnchanged(const std::string& hlo) {
  PassRun run = RunPass("simplify-while-loops", hlo);
  const std::string before = run.before;
  bool changed = run.changed;
  for (int i = 0; i < 5 && run.changed; ++i) run = RunPass("simplify-while-loops", run.after);
  EXPECT_FALSE(run.changed) << "no fixed point in 6 runs";
  run.before = before;
  run.changed = changed;
  return run;
}

// The order read from XLA's pass dumps of a diffrax solve: the dead elements went in one run, and
// the scalar constants that propagation would have freed stayed for the next.
TEST(WhileLoopSimplifierTest, DeadElementsGoBeforeConstantsPropagate) {
  PassRun run = RunPass("simplify-while-loops", CountedLoop(5));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %p = (s32[], f32[4], f32[]) parameter(0)
CHECK-NOT: multiply
CHECK: %scale{{.*}} get-tuple-element(
CHECK: ENTRY
CHECK: (s32[], f32[4], f32[]) while(
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, RemovesDeadAndConstantElements) {
  PassRun run = RunUntilUnchanged(CountedLoop(5));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %p = (s32[], f32[4]) parameter(0)
CHECK-NOT: multiply
CHECK: f32[] constant(0.5)
CHECK: ROOT %t{{.*}} = (s32[], f32[4]) tuple(
CHECK: ENTRY
CHECK: (s32[], f32[4]) while(
CHECK: (s32[], f32[4], f32[4], f32[]) tuple(
CHECK: ROOT %r = f32[4] get-tuple-element({{.*}}), index=1
)");
  // Like XLA, the old loop's reader goes through a full-width tuple (live
  // elements from the new loop, dead ones from the old init) left for
  // tuple-simplifier and dce.
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: ROOT %r = f32[4] get-tuple-element((s32[], f32[4], f32[4], f32[]) %{{.*}}), index=1
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, RemovesZeroTripLoop) {
  PassRun run = RunUntilUnchanged(CountedLoop(0, 3));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: while(");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, InlinesOneTripLoop) {
  PassRun run = RunUntilUnchanged(CountedLoop(1));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: while(\nCHECK: add(");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, BruteForcesTripCountOfUnusualUpdate) {
  // i doubles from 1 while i < 2: not a trivial add loop, found by stepping
  // the induction variable; it runs exactly once.
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  two = s32[] constant(2)
  next = s32[] multiply(i, two)
  v = f32[3] get-tuple-element(p), index=1
  v2 = f32[3] exponential(v)
  ROOT t = (s32[], f32[3]) tuple(next, v2)
}
cond {
  p = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[3] parameter(0)
  one = s32[] constant(1)
  init = (s32[], f32[3]) tuple(one, x)
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: while(\nCHECK: exponential(");
  ExpectSameSemantics(run);
}

// Like XLA (no loop-wide side-effect bail), a loop with a side effect still
// loses its dead elements; the side-effecting instruction stays in the body
// even when nothing reads it any more.
TEST(WhileLoopSimplifierTest, NarrowsLoopWithSideEffectsKeepingThem) {
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[] rng(lo, hi), distribution=rng_uniform
  ROOT t = (s32[], f32[]) tuple(next, r)
}
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  zero = s32[] constant(0)
  f = f32[] constant(0)
  init = (s32[], f32[]) tuple(zero, f)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT g = s32[] get-tuple-element(w), index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: rng(
CHECK: %p = (s32[]) parameter(0)
CHECK: ROOT %t{{.*}} = (s32[]) tuple(
CHECK: ENTRY
CHECK: (s32[]) while(
)");
}

// An element that only a side-effecting instruction reads stays.
TEST(WhileLoopSimplifierTest, KeepsElementASideEffectReads) {
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[] get-tuple-element(p), index=1
  e = f32[] custom-call(v), custom_call_target="log_value", custom_call_has_side_effect=true
  ROOT t = (s32[], f32[]) tuple(next, v)
}
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  zero = s32[] constant(0)
  f = f32[] parameter(0)
  init = (s32[], f32[]) tuple(zero, f)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT g = s32[] get-tuple-element(w), index=0
}
)");
  EXPECT_FALSE(run.changed);
}

// Rematerialization puts an optimization barrier in the loop body; to XLA
// that is no side effect, so a constant element still goes (its reads become
// the constant, then the dead element leaves the loop state).
TEST(WhileLoopSimplifierTest, RemovesConstantElementOfLoopWithOptimizationBarrier) {
  PassRun run = RunUntilUnchanged(R"(HloModule m
body {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  acc = f32[4] get-tuple-element(p), index=1
  k = s32[] get-tuple-element(p), index=2
  j = s32[] add(i, k)
  jf = f32[] convert(j)
  jb = f32[4] broadcast(jf), dimensions={}
  bt = (f32[4], f32[4]) tuple(acc, jb)
  ob = (f32[4], f32[4]) opt-barrier(bt)
  a = f32[4] get-tuple-element(ob), index=0
  b = f32[4] get-tuple-element(ob), index=1
  acc2 = f32[4] add(a, b)
  ROOT t = (s32[], f32[4], s32[]) tuple(next, acc2, k)
}
cond {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  m1 = s32[] constant(-1)
  init = (s32[], f32[4], s32[]) tuple(zero, x, m1)
  w = (s32[], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %p = (s32[], f32[4]) parameter(0)
CHECK: s32[] constant(-1)
CHECK: opt-barrier(
CHECK: ROOT %t{{.*}} = (s32[], f32[4]) tuple(
CHECK: ENTRY
CHECK: (s32[], f32[4]) while(
)");
  ExpectSameSemantics(run);
}

// A scalar constant element read twice in the body (JAX often re-reads an
// element): every read becomes the constant and the element goes; an array
// constant element is left in the loop, as XLA does.
std::string LoopReadingConstantTwice(const std::string& type, const std::string& value,
                                     const std::string& broadcast_dims) {
  return R"(HloModule m
body {
  p = (s32[], f32[4], )" +
         type + R"() parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  acc = f32[4] get-tuple-element(p), index=1
  k = )" +
         type + R"( get-tuple-element(p), index=2
  k2 = )" +
         type + R"( get-tuple-element(p), index=2
  b = f32[4] broadcast(k2), dimensions=)" +
         broadcast_dims + R"(
  acc2 = f32[4] add(acc, b)
  ROOT t = (s32[], f32[4], )" +
         type + R"() tuple(next, acc2, k)
}
cond {
  p = (s32[], f32[4], )" +
         type + R"() parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  c = )" +
         type + " constant(" + value + R"()
  init = (s32[], f32[4], )" +
         type + R"() tuple(zero, x, c)
  w = (s32[], f32[4], )" +
         type + R"() while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";
}

TEST(WhileLoopSimplifierTest, PropagatesScalarConstantIntoEveryRead) {
  PassRun run = RunUntilUnchanged(LoopReadingConstantTwice("f32[]", "0.5", "{}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %p = (s32[], f32[4]) parameter(0)
CHECK: f32[] constant(0.5)
CHECK: broadcast(f32[] %c
CHECK: ROOT %t{{.*}} = (s32[], f32[4]) tuple(
CHECK: ENTRY
CHECK: (s32[], f32[4]) while(
)");
  ExpectSameSemantics(run);
}

// As XLA's constant propagation does it (its dumps of NumPyro's loops show
// it): each read of the element gets a copy of the constant of its own, the
// body root's pass-through included.
TEST(WhileLoopSimplifierTest, EveryReadOfAConstantElementGetsItsOwnCopy) {
  PassRun run = RunPass("simplify-while-loops", LoopReadingConstantTwice("f32[]", "0.5", "{}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %c.2 = f32[] constant(0.5)
CHECK: broadcast(f32[] %c.2)
CHECK: %c.1 = f32[] constant(0.5)
CHECK: ROOT %t = (s32[], f32[4], f32[]) tuple(s32[] %next, f32[4] %acc2, f32[] %c.1)
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, NoChangeForArrayConstantElement) {
  PassRun run =
      RunPass("simplify-while-loops", LoopReadingConstantTwice("f32[4]", "{1, 2, 3, 4}", "{0}"));
  EXPECT_FALSE(run.changed);
}

// TensorFlow's loop state: counters, a TensorList as an (array, size) tuple
// nested in the state, and a value; both counters start at 0 and add 1.
constexpr char kTensorFlowStyleLoop[] = R"(HloModule m
body {
  p = (s32[], s32[], (f32[8,4], s32[]), f32[4]) parameter(0)
  t = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  t1 = s32[] add(t, one)
  i = s32[] get-tuple-element(p), index=1
  i1 = s32[] add(i, one)
  list = (f32[8,4], s32[]) get-tuple-element(p), index=2
  items = f32[8,4] get-tuple-element(list), index=0
  size = s32[] get-tuple-element(list), index=1
  zero = s32[] constant(0)
  row = f32[1,4] dynamic-slice(items, i, zero), dynamic_slice_sizes={1,4}
  r = f32[4] reshape(row)
  v = f32[4] get-tuple-element(p), index=3
  v1 = f32[4] add(v, r)
  list1 = (f32[8,4], s32[]) tuple(items, size)
  ROOT out = (s32[], s32[], (f32[8,4], s32[]), f32[4]) tuple(t1, i1, list1, v1)
}
cond {
  p = (s32[], s32[], (f32[8,4], s32[]), f32[4]) parameter(0)
  t = s32[] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  n = s32[] constant(8)
  a = pred[] compare(t, n), direction=LT
  b = pred[] compare(i, n), direction=LT
  ROOT both = pred[] and(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  zero = s32[] constant(0)
  one = s32[] constant(1)
  list = (f32[8,4], s32[]) tuple(x, one)
  fzero = f32[] constant(0)
  v = f32[4] broadcast(fzero), dimensions={}
  init = (s32[], s32[], (f32[8,4], s32[]), f32[4]) tuple(zero, zero, list, v)
  w = (s32[], s32[], (f32[8,4], s32[]), f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=3
}
)";

TEST(WhileLoopSimplifierTest, FlattensNestedLoopState) {
  PassRun run = RunPass("simplify-while-loops", kTensorFlowStyleLoop);
  EXPECT_TRUE(run.changed);
  // One rewrite per loop and run, as in XLA: the flat loop, nothing else yet.
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: %p = (s32[], s32[], f32[8,4], s32[], f32[4]) parameter(0)
CHECK: ROOT {{.*}} = (s32[], s32[], f32[8,4], s32[], f32[4]) tuple(
CHECK: ENTRY
CHECK: (s32[], s32[], f32[8,4], s32[], f32[4]) while(
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, MergesACounterIntoTheTripCounter) {
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], s32[], f32[8,4], f32[4]) parameter(0)
  t = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  t1 = s32[] add(t, one)
  i = s32[] get-tuple-element(p), index=1
  i1 = s32[] add(one, i)
  items = f32[8,4] get-tuple-element(p), index=2
  zero = s32[] constant(0)
  row = f32[1,4] dynamic-slice(items, i, zero), dynamic_slice_sizes={1,4}
  r = f32[4] reshape(row)
  v = f32[4] get-tuple-element(p), index=3
  v1 = f32[4] add(v, r)
  ROOT out = (s32[], s32[], f32[8,4], f32[4]) tuple(t1, i1, items, v1)
}
cond {
  p = (s32[], s32[], f32[8,4], f32[4]) parameter(0)
  t = s32[] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  n = s32[] constant(8)
  a = pred[] compare(t, n), direction=LT
  b = pred[] compare(i, n), direction=LT
  ROOT both = pred[] and(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  zero = s32[] constant(0)
  fzero = f32[] constant(0)
  v = f32[4] broadcast(fzero), dimensions={}
  init = (s32[], s32[], f32[8,4], f32[4]) tuple(zero, zero, x, v)
  w = (s32[], s32[], f32[8,4], f32[4]) while(init), condition=cond, body=body
  last = s32[] get-tuple-element(w), index=1
  sum = f32[4] get-tuple-element(w), index=3
  ROOT r = (s32[], f32[4]) tuple(last, sum)
}
)");
  EXPECT_TRUE(run.changed);
  // Element 1 stops changing and is read as i + t * 1 in the body, the
  // condition and after the loop, each through a tuple of the state in that
  // form; the body's new root passes element 1 through and reads the others
  // from the old root, as XLA's rebuilt loop does.
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: multiply(s32[]
CHECK: %out = (s32[], s32[], f32[8,4], f32[4]) tuple(s32[] %t1, s32[] %i1,
CHECK: ROOT {{.*}} tuple(s32[] %get-tuple-element.{{[0-9]+}}, s32[] %get-tuple-element.{{[0-9]+}}, f32[8,4]
CHECK: cond
CHECK: multiply(s32[]
CHECK: ENTRY
CHECK: multiply(s32[]
)");
  ExpectSameSemantics(run);
}

// Two elements that step by constants and no counter from 0 (JAX's
// while_loop from 3 carrying a second index): XLA appends a trip counter to
// the state and reads both as init + counter * step.
constexpr char kTwoInductionVariablesNoCounter[] = R"(HloModule m
body {
  p = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = s32[] get-tuple-element(p), index=1
  two = s32[] constant(2)
  k1 = s32[] add(k, two)
  acc = f32[4] get-tuple-element(p), index=2
  kf = f32[] convert(k)
  b = f32[4] broadcast(kf), dimensions={}
  acc1 = f32[4] add(acc, b)
  ROOT out = (s32[], s32[], f32[4]) tuple(i1, k1, acc1)
}
cond {
  p = (s32[], s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(20)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  three = s32[] constant(3)
  seven = s32[] constant(7)
  init = (s32[], s32[], f32[4]) tuple(three, seven, x)
  w = (s32[], s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)";

TEST(WhileLoopSimplifierTest, EndsWithDeadCodeRemovalWhereItChanged) {
  // As XLA's pass does when it changed the module: dead code goes, here an
  // unused negate beside the loop it rewrote.
  std::string hlo = kTwoInductionVariablesNoCounter;
  const std::string param = "  x = f32[4] parameter(0)\n";
  hlo.insert(hlo.find(param) + param.size(), "  unused = f32[4] negate(x)\n");
  PassRun run = RunPass("simplify-while-loops", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("negate("), std::string::npos) << run.after;
}

TEST(WhileLoopSimplifierTest, AddsATripCounterWhereTwoVariablesHaveNone) {
  PassRun run = RunPass("simplify-while-loops", kTwoInductionVariablesNoCounter);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: body
CHECK: ROOT {{.*}} = (s32[], s32[], f32[4], s32[]) tuple(
CHECK: ENTRY
CHECK: (s32[], s32[], f32[4], s32[]) tuple(s32[] %{{.*}}, s32[] %{{.*}}, f32[4] %{{.*}}, s32[] %constant
CHECK: (s32[], s32[], f32[4], s32[]) while(
)");
  ExpectSameSemantics(run);
  // In the default pipeline both variables fold into the counter: the state
  // that is left is the value and the counter, as XLA leaves it.
  auto pipeline = PassRegistry::WithPipelines().Create("xla-cpu-default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PassRun full = RunPass(**pipeline, kTwoInductionVariablesNoCounter);
  EXPECT_CHECKS(full.after, R"(
CHECK: ENTRY
CHECK: (f32[4], s32[]) while(
)");
  ExpectSameSemantics(full);
}

TEST(WhileLoopSimplifierTest, DefaultPipelineLeavesTheStateXlaLeaves) {
  // Flattening, then the list's constant size and the second counter go:
  // the trip counter, the list's array and the value are left, as XLA
  // leaves them.
  auto pipeline = PassRegistry::WithPipelines().Create("xla-cpu-default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  PassRun run = RunPass(**pipeline, kTensorFlowStyleLoop);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: (s32[], f32[8,4], f32[4]) while(
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopSimplifierTest, NoChangeWhenEverythingIsLive) {
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  v2 = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(next, v2)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(7)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  s = s32[] parameter(1)
  init = (s32[], f32[4]) tuple(s, x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
  EXPECT_FALSE(run.changed);
}

// A loop in a loop, each carrying a dead element (a junk value squared each
// trip). XLA gathers the loops in the order their computations joined the
// module; a structural rewrite gives the outer loop a new body, so an inner
// loop gathered from the old body waits for the next run.
const std::string kNestedLoops = NestedLoops({{"inner", 3}, {"outer", 4}});

// How many loops carry three elements (the dead one still there) and two.
std::pair<int, int> LoopWidths(const Module& module) {
  const std::string text = PrintModule(module);
  auto count = [&](std::string_view pattern) {
    int n = 0;
    for (size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1)) {
      ++n;
    }
    return n;
  };
  return {count("(s32[], f32[4], f32[4]) while("), count("(s32[], f32[4]) while(")};
}

TEST(WhileLoopSimplifierTest, LoopsInABodyARewriteReplacedWaitForTheNextRun) {
  auto pass = PassRegistry::Builtin().Create("simplify-while-loops");
  ASSERT_TRUE(pass.ok()) << pass.status();
  // As parsed, the inner loop's computation joined first: both loops narrow in one run.
  auto parsed = ParseModule(kNestedLoops, "nested.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE((*pass)->Run(**parsed).ok());
  EXPECT_EQ(LoopWidths(**parsed), std::make_pair(0, 2));

  // The outer body made anew after the entry (as XLA's invariant code motion
  // does when it widens a loop): the outer loop is visited first and its
  // rewrite leaves the inner loop for the next run.
  auto module = ParseModule(kNestedLoops, "nested.hlo");
  ASSERT_TRUE(module.ok());
  (*module)->NoteRecreated((*module)->FindComputation("outer_body"));
  ASSERT_TRUE((*pass)->Run(**module).ok());
  EXPECT_EQ(LoopWidths(**module), std::make_pair(1, 1));
  ASSERT_TRUE((*pass)->Run(**module).ok());
  EXPECT_EQ(LoopWidths(**module), std::make_pair(0, 2));
}

TEST(WhileLoopSimplifierTest, OnlyLoopsDirectlyInAReplacedBodyWait) {
  auto pass = PassRegistry::Builtin().Create("simplify-while-loops");
  ASSERT_TRUE(pass.ok()) << pass.status();
  // Computations in the order entry, outer body, middle body (as after XLA's
  // invariant code motion widened the two bodies): the outer loop's rewrite
  // copies its body, whose middle loop then has a body of two callers and
  // waits; the inner loop, one level further in, has one caller still and
  // narrows in the same run, as in XLA.
  const std::string text = NestedLoops({{"inner", 3}, {"middle", 2}, {"outer", 2}});
  auto module = ParseModule(text, "nested3.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  (*module)->NoteRecreated((*module)->FindComputation("outer_body"));
  (*module)->NoteRecreated((*module)->FindComputation("middle_body"));
  ASSERT_TRUE((*pass)->Run(**module).ok());
  EXPECT_EQ(LoopWidths(**module), std::make_pair(1, 2));
  ASSERT_TRUE((*pass)->Run(**module).ok());
  EXPECT_EQ(LoopWidths(**module), std::make_pair(0, 3));
}

// Element 1 is read only to compute itself (with the counter, which the
// condition reads) and element 2, and element 2 is read by nothing: as in
// XLA, element 2 goes in this run and element 1, whose value still reached
// another element's next value, in the next.
TEST(WhileLoopSimplifierTest, AnElementFeedingOnlyADeadOneGoesInTheNextRun) {
  PassRun run = RunPass("simplify-while-loops", R"(HloModule m
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  a = f32[4] get-tuple-element(p), index=1
  fi = f32[] convert(i)
  ib = f32[4] broadcast(fi), dimensions={}
  a2 = f32[4] multiply(a, ib)
  ROOT t = (s32[], f32[4], f32[4]) tuple(next, a2, a)
}
cond {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  neg = f32[4] negate(x)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, x, neg)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK: (s32[], f32[4]) while(");
  // The next run, after the clean-up the pipeline runs in between (the old
  // loop's readers go through a full-width tuple until then).
  for (const char* name : {"tuple-simplifier", "dce", "simplify-while-loops"}) {
    auto pass = PassRegistry::Builtin().Create(name);
    ASSERT_TRUE(pass.ok());
    ASSERT_TRUE((*pass)->Run(*run.module).ok());
  }
  EXPECT_CHECKS(PrintModule(*run.module), "CHECK: ENTRY\nCHECK: (s32[]) while(");
}

// Two stacked copies of one scan output: both elements start from the same
// zeros and the body writes the same row at the same index into each, so
// one of them is enough and the loop's users read the survivor's result. A
// third element, written another row, stays.
TEST(WhileLoopSimplifierTest, MergesElementsUpdatedAlikeFromOneInit) {
  const std::string hlo = R"(HloModule m
body {
  p = (s32[], f32[3,2], f32[3,2], f32[3,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[3,2] get-tuple-element(p), index=1
  b = f32[3,2] get-tuple-element(p), index=2
  c = f32[3,2] get-tuple-element(p), index=3
  v = f32[2] get-tuple-element(p), index=4
  zero = s32[] constant(0)
  row = f32[1,2] reshape(v)
  a1 = f32[3,2] dynamic-update-slice(a, row, i, zero)
  b1 = f32[3,2] dynamic-update-slice(b, row, i, zero)
  nv = f32[2] negate(v)
  nrow = f32[1,2] reshape(nv)
  c1 = f32[3,2] dynamic-update-slice(c, nrow, i, zero)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[3,2], f32[3,2], f32[3,2], f32[2]) tuple(next, a1, b1, c1, v)
}
cond {
  p = (s32[], f32[3,2], f32[3,2], f32[3,2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  v = f32[2] parameter(0)
  z = f32[] constant(0)
  zeros = f32[3,2] broadcast(z), dimensions={}
  start = s32[] constant(0)
  init = (s32[], f32[3,2], f32[3,2], f32[3,2], f32[2]) tuple(start, zeros, zeros, zeros, v)
  w = (s32[], f32[3,2], f32[3,2], f32[3,2], f32[2]) while(init), condition=cond, body=body
  a = f32[3,2] get-tuple-element(w), index=1
  b = f32[3,2] get-tuple-element(w), index=2
  c = f32[3,2] get-tuple-element(w), index=3
  ab = f32[3,2] add(a, b)
  ROOT r = f32[3,2] add(ab, c)
}
)";
  PassRun run = RunUntilUnchanged(hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while((s32[], f32[3,2], f32[3,2], f32[2]){{.*}})
)");
  // Same results: the merged element's users read the survivor's rows.
  ExpectSameSemantics(run);
}

}  // namespace
}  // namespace hlogym::testing
