// simplify-conditional: constant selectors, single branches, cheap selects.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

std::string Conditional(std::string_view selector, std::string_view true_op) {
  return std::string(R"(HloModule m
on_true {
  a = (f32[4], f32[4]) parameter(0)
  x = f32[4] get-tuple-element(a), index=0
  y = f32[4] get-tuple-element(a), index=1
  r = f32[4] )") +
         std::string(true_op) + R"((x, y)
  ROOT t = (f32[4], f32[4]) tuple(r, x)
}
on_false {
  b = f32[4] parameter(0)
  n = f32[4] negate(b)
  ROOT t = (f32[4], f32[4]) tuple(n, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  q = pred[] parameter(2)
  s = pred[] )" +
         std::string(selector) + R"(
  args = (f32[4], f32[4]) tuple(x, y)
  c = (f32[4], f32[4]) conditional(s, args, y), true_computation=on_true, false_computation=on_false
  ROOT g = f32[4] get-tuple-element(c), index=0
}
)";
}

TEST(ConditionalSimplifierTest, InlinesBranchOfConstantSelector) {
  PassRun run = RunPass("simplify-conditional", Conditional("constant(false)", "add"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: conditional(\nCHECK: negate(");
  ExpectSameSemantics(run);
}

TEST(ConditionalSimplifierTest, InlinesTrueBranch) {
  PassRun run = RunPass("simplify-conditional", Conditional("constant(true)", "multiply"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: conditional(\nCHECK: multiply(");
  ExpectSameSemantics(run);
}

TEST(ConditionalSimplifierTest, SelectsBetweenCheapBranches) {
  PassRun run = RunPass("simplify-conditional", Conditional("copy(q)", "add"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK-NOT: conditional(
CHECK: add(
CHECK: negate(
CHECK: broadcast(pred[] %s), dimensions={}
CHECK: select(
)");
  ExpectSameSemantics(run, 6);
}

TEST(ConditionalSimplifierTest, KeepsExpensiveBranches) {
  PassRun kept = RunPass("simplify-conditional", R"(HloModule m
on_true {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
on_false {
  ROOT b = f32[4,4] parameter(0)
}
ENTRY main {
  x = f32[4,4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = f32[4,4] conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_FALSE(kept.changed);
}

TEST(ConditionalSimplifierTest, IndexOutOfRangeRunsLastBranch) {
  PassRun run = RunPass("simplify-conditional", R"(HloModule m
b0 {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
b1 {
  a = f32[4] parameter(0)
  ROOT n = f32[4] exponential(a)
}
b2 {
  a = f32[4] parameter(0)
  ROOT n = f32[4] sqrt(a)
}
ENTRY main {
  x = f32[4] parameter(0)
  i = s32[] constant(7)
  ROOT c = f32[4] conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK-NOT: conditional(\nCHECK: ROOT {{.*}} sqrt(");
}

}  // namespace
}  // namespace hlogym::testing
