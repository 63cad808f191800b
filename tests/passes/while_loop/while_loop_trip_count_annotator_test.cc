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

// `text` with `from` replaced by `to` (once).
std::string Replaced(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(WhileLoopTripCountAnnotatorTest, ReadsOfTheFinalCounterBecomeAConstant) {
  // After 4 trips from 1 in steps of 3 the counter is 13: as XLA's annotator
  // does, the read after the loop is replaced by that constant and left,
  // unused, for dce.
  const std::string hlo =
      Replaced(Loop("constant(1)", "constant(11)", "add"),
               "  ROOT loop = (s32[], f32[4]) while(init), condition=cond, body=body", R"(
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  last = s32[] get-tuple-element(loop), index=0
  ROOT f = f32[] convert(last))");
  PassRun run = RunPass("while-loop-trip-count-annotator", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %last = s32[] get-tuple-element(
CHECK: %constant{{[.0-9]*}} = s32[] constant(13)
CHECK: ROOT %f = f32[] convert(s32[] %constant
)");
  ExpectSameSemantics(run);
}

TEST(WhileLoopTripCountAnnotatorTest, CountingDownGivesNoInitAndStep) {
  // 10, 7, 4, 1: XLA records an init and step only for loops that count up.
  const std::string hlo =
      Replaced(Replaced(Loop("constant(10)", "constant(0)", "add"), "constant(3)", "constant(-3)"),
               "direction=LT", "direction=GT");
  PassRun run = RunPass("while-loop-trip-count-annotator", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: backend_config={"known_trip_count":{"n":"4"},"known_induction_variable":{"tuple_index":"0"},"dynamic_variables":[]})");
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
