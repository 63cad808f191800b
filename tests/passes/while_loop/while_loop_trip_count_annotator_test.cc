// while-loop-trip-count-annotator: backend_config with the known trip count.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

std::string Loop(std::string_view init, std::string_view bound, std::string_view update) {
  return std::string(R"(HloModule m
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  step = s32[] constant(3)
  next = s32[] )") +
         std::string(update) + R"((i, step)
  v = f32[4] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[4]) tuple(next, v)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] )" +
         std::string(bound) + R"(
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  s = s32[] parameter(1)
  zero = s32[] )" +
         std::string(init) + R"(
  init = (s32[], f32[4]) tuple(zero, x)
  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body
}
)";
}

TEST(WhileLoopTripCountAnnotatorTest, AnnotatesTrivialRange) {
  PassRun run =
      RunPass("while-loop-trip-count-annotator", Loop("constant(1)", "constant(11)", "add"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: while({{.*}}backend_config={"known_trip_count":{"n":"4"},"known_init_step":{"init":"1","step":"3"},"known_induction_variable":{"tuple_index":"0"},"dynamic_variables":[]})");
  // Idempotent.
  auto pass = PassRegistry::Builtin().Create("while-loop-trip-count-annotator");
  ASSERT_TRUE(pass.ok());
  auto again = (*pass)->Run(*run.module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(WhileLoopTripCountAnnotatorTest, BruteForcesOtherUpdates) {
  PassRun run =
      RunPass("while-loop-trip-count-annotator", Loop("constant(1)", "constant(100)", "multiply"));
  EXPECT_TRUE(run.changed);
  // 1, 3, 9, 27, 81 are below 100.
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: backend_config={"known_trip_count":{"n":"5"},"known_induction_variable":{"tuple_index":"0"},"dynamic_variables":[]})");
}

TEST(WhileLoopTripCountAnnotatorTest, UnknownStartGivesOnlyTheInductionVariable) {
  PassRun run = RunPass("while-loop-trip-count-annotator", Loop("copy(s)", "constant(9)", "add"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: backend_config={"known_induction_variable":{"tuple_index":"0"},"dynamic_variables":[]})");
}

TEST(WhileLoopTripCountAnnotatorTest, NoWhileNoChange) {
  PassRun run = RunPass("while-loop-trip-count-annotator", R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
