// dynamic_padder: on static shapes, dce and get-dimension-size folding; with
// dynamic dimensions, only the rewrites that need no padding.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DynamicPadderTest, StaticGetDimensionSizeBecomesConstant) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[3,7] parameter(0)
  n = s32[] get-dimension-size(a), dimensions={1}
  nf = f32[] convert(n)
  b = f32[3,7] broadcast(nf), dimensions={}
  ROOT r = f32[3,7] add(a, b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] constant(7)
CHECK-NOT: get-dimension-size
CHECK: ROOT
)");
  EXPECT_EQ(run.module->instruction_count(), 5);
  ExpectSameSemantics(run);
}

// Where it has work, XLA's padder first flattens the call graph: two reduces
// sharing a reducer get one copy each (read from XLA's dumps of PyTorch/XLA's
// batch norms, whose sizes come from get-dimension-size); without work the
// sharing stays.
TEST(DynamicPadderTest, WithWorkEachReduceGetsItsOwnReducer) {
  const std::string hlo = R"(HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[3,7] parameter(0)
  z = f32[] constant(0)
  r1 = f32[3] reduce(a, z), dimensions={1}, to_apply=sum
  sq = f32[3,7] multiply(a, a)
  r2 = f32[3] reduce(sq, z), dimensions={1}, to_apply=sum
  n = s32[] get-dimension-size(a), dimensions={1}
  nf = f32[] convert(n)
  b = f32[3] broadcast(nf), dimensions={}
  d = f32[3] divide(r1, b)
  ROOT r = f32[3] add(d, r2)
}
)";
  PassRun run = RunPass("dynamic_padder", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %sum.clone (
CHECK: s32[] constant(7)
CHECK-NOT: get-dimension-size
)");
  EXPECT_NE(run.after.find("to_apply=%sum.clone"), std::string::npos) << run.after;
  EXPECT_NE(run.after.find("to_apply=%sum\n"), std::string::npos) << run.after;
  ExpectSameSemantics(run);

  std::string no_work = hlo;
  no_work.replace(no_work.find("  n = s32[] get-dimension-size(a), dimensions={1}\n"),
                  std::string("  n = s32[] get-dimension-size(a), dimensions={1}\n").size(),
                  "  n = s32[] constant(7)\n");
  EXPECT_FALSE(RunPass("dynamic_padder", no_work).changed);
}

TEST(DynamicPadderTest, DeadCodeAloneNoChange) {
  // As XLA's pass on static modules: dead code stays unless something was
  // rewritten.
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  dead = f32[4] negate(a)
  ROOT r = f32[4] exponential(a)
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_EQ(run.module->instruction_count(), 3);
}

TEST(DynamicPadderTest, RewriteAlsoRemovesDeadCode) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  dead = f32[4] negate(a)
  ROOT n = s32[] get-dimension-size(a), dimensions={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} s32[] constant(4)
)");
  EXPECT_EQ(run.module->instruction_count(), 2);
  ExpectSameSemantics(run);
}

TEST(DynamicPadderTest, StaticModuleNoChange) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  ROOT r = f32[4] exponential(a)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(DynamicPadderTest, SizeOfSetDimensionSizeIsItsOperand) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[8] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8] set-dimension-size(a, n), dimensions={0}
  g = s32[] get-dimension-size(d), dimensions={0}
  b = f32[<=8] custom-call(d), custom_call_target="SetBound"
  ROOT t = (s32[], f32[<=8]) tuple(g, b)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: set-dimension-size
CHECK-NOT: get-dimension-size
CHECK-NOT: custom-call
CHECK: ROOT {{.*}} tuple(s32[] %n, f32[<=8] %d)
)");
}

// TensorFlow's top_k and argsort: each result set to its own static size, a
// constant equal to the dimension. Its users read the operand (XLA's padder
// forwards every set-dimension-size), and the constant goes with it; one that
// makes a dimension dynamic (above) stays.
TEST(DynamicPadderTest, StaticSetDimensionSizeIsItsOperand) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[8,32] parameter(0)
  s = f32[8,5] slice(a), slice={[0:8], [0:5]}
  five = s32[] constant(5)
  d = f32[8,5] set-dimension-size(s, five), dimensions={1}
  ROOT e = f32[8,5] exponential(d)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: set-dimension-size
CHECK-NOT: constant
CHECK: ROOT %e = f32[8,5] exponential(f32[8,5] %s)
)");
}

TEST(DynamicPadderTest, UnknownDynamicSizeLeftAlone) {
  PassRun run = RunPass("dynamic_padder", R"(HloModule m
ENTRY main {
  a = f32[<=8] parameter(0)
  ROOT g = s32[] get-dimension-size(a), dimensions={0}
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(DynamicPadderTest, BadDimensionNamesTheInstruction) {
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  ROOT bad_size = s32[] get-dimension-size(a), dimensions={3}
}
)",
                            "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto pass = PassRegistry::Builtin().Create("dynamic_padder");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad_size"), std::string::npos) << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
