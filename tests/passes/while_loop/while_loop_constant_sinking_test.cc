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
CHECK: body
CHECK: %k{{[.0-9]*}}.sunk{{[.0-9]*}} = f32[4] constant({1, 2, 3, 4})
CHECK: ROOT %t{{[.0-9]*}} = {{.*}} tuple({{.*}}, f32[4] %k{{[.0-9]*}}, s32[] %n{{[.0-9]*}})
CHECK: cond
CHECK: %n{{[.0-9]*}}.sunk{{[.0-9]*}} = s32[] constant(5)
CHECK: compare(s32[] %i{{[.0-9]*}}, s32[] %n{{[.0-9]*}}.sunk{{[.0-9]*}})
)");
  ExpectSameSemantics(run);
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
