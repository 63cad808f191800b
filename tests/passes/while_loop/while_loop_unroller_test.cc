// while_loop_unroller: full unrolling of small trivial loops.
#include "passes/while_loop/while_loop_unroller.h"

#include <gmock/gmock.h>

#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  f = f32[] convert(i)
  b = f32[4] broadcast(f), dimensions={}
  y = f32[4] multiply(x, b)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY main {
  x = f32[4] parameter(0)
  start = s32[] constant(1)
  init = (s32[], f32[4]) tuple(start, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

TEST(WhileLoopUnrollerTest, UnrollsTrivialLoopWithConstantInductionValues) {
  PassRun run = RunPass("while_loop_unroller", kLoop);
  EXPECT_TRUE(run.changed);
  // Starts at 1, stops before 3: two copies, reading 1 and 2.
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: while(
CHECK: ENTRY
CHECK: s32[] constant(1)
CHECK: convert(s32[] {{.*}})
CHECK: s32[] constant(2)
CHECK: convert(s32[] {{.*}})
CHECK-NOT: while(
)");
  EXPECT_EQ(run.after.find("body"), std::string::npos) << run.after;
  EXPECT_EQ(run.after.find("cond"), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(WhileLoopUnrollerTest, NestedLoopsUnrollInnerFirst) {
  PassRun run = RunPass("while_loop_unroller", R"(HloModule m
icond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ibody {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  y = f32[] add(x, x)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[]) tuple(j, y)
}
ocond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
obody {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, x)
  w = (s32[], f32[]) while(init), condition=icond, body=ibody
  y = f32[] get-tuple-element(w), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[]) tuple(j, y)
}
ENTRY main {
  x = f32[] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[]) tuple(z, x)
  w = (s32[], f32[]) while(init), condition=ocond, body=obody
  ROOT r = f32[] get-tuple-element(w), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("while("), std::string::npos) << run.after;
  EXPECT_EQ(run.module->computation_count(), 1);
  ExpectSameSemantics(run);
}

TEST(WhileLoopUnrollerTest, LongOrUnknownLoopsNoChange) {
  std::string long_loop = kLoop;
  long_loop.replace(long_loop.find("constant(3)"), 11, "constant(100)");
  EXPECT_FALSE(RunPass("while_loop_unroller", long_loop).changed);
  // The bound is part of the loop state.
  PassRun run = RunPass("while_loop_unroller", R"(HloModule m
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY main {
  n = s32[] parameter(0)
  z = s32[] constant(0)
  init = (s32[], s32[]) tuple(z, n)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(WhileLoopUnrollerTest, StopsAtTheOpCountLimitOfItsCaller) {
  // 60 iterations inside 60: XLA's thresholds look at each body as it was, so the outer body,
  // grown by the inner loop's 60 copies, is copied 60 times.
  const std::string text = NestedLoops({{"inner", 60}, {"outer", 60}});
  absl::StatusOr<std::unique_ptr<Module>> whole = ParseModule(text);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(*WhileLoopUnroller().Run(**whole));
  EXPECT_GT((*whole)->instruction_count(), 10'000);

  absl::StatusOr<std::unique_ptr<Module>> limited = ParseModule(text);
  ASSERT_TRUE(limited.ok());
  OpCountLimit limit(1'000);
  absl::StatusOr<bool> stopped = WhileLoopUnroller().Run(**limited);
  EXPECT_TRUE(absl::IsResourceExhausted(stopped.status())) << stopped.status();
  EXPECT_THAT(stopped.status().message(), ::testing::HasSubstr("while_loop_unroller stopped at"));
  EXPECT_TRUE(limit.reached());
  // It stopped after the copy that passed the limit, not at the end.
  EXPECT_LT((*limited)->instruction_count(), 2'000);
}

}  // namespace
}  // namespace hlogym::testing
