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
CHECK: broadcast(pred[] %s), dimensions={}
CHECK: add(
CHECK: negate(
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

// What XLA's ConditionalSimplifier does to a conditional it keeps (its pass dumps of a diffrax
// gradient solve, whose D these make exact): result elements every branch computes with the same
// instruction merge, unread result elements go, and so do the branch operands' unread elements.
constexpr char kKeptConditional[] = R"(HloModule m
on_true {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  r = f32[4] reverse(a), dimensions={0}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(r, r, a)
}
on_false {
  p = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  n = f32[4] negate(a)
  r = f32[4] reverse(n), dimensions={0}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(r, r, n)
}
ENTRY main {
  q = pred[] parameter(0)
  x = f32[4] parameter(1)
  y = f32[4] parameter(2)
  ops = (f32[4], f32[4]) tuple(x, y)
  k = (f32[4], f32[4], f32[4]) conditional(q, ops, ops), true_computation=on_true, false_computation=on_false
  g0 = f32[4] get-tuple-element(k), index=0
  g1 = f32[4] get-tuple-element(k), index=1
  ROOT s = f32[4] add(g0, g1)
}
)";

TEST(ConditionalSimplifierTest, KeptConditionalLosesDuplicateAndUnreadElements) {
  PassRun run = RunPass("simplify-conditional", kKeptConditional);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: (f32[4]) tuple(f32[4] %{{.*}})
CHECK: %k = (f32[4]) conditional(
CHECK: %g0 = f32[4] get-tuple-element({{.*}}), index=0
CHECK: %g1 = f32[4] get-tuple-element({{.*}}), index=0
)");
  // The branches the conditional now calls take one element and return one.
  int narrowed = 0;
  for (const auto& computation : run.module->computations()) {
    if (computation->num_parameters() == 1 &&
        computation->parameter_instruction(0)->shape().ToString() == "(f32[4])" &&
        computation->root_instruction()->shape().ToString() == "(f32[4])") {
      ++narrowed;
    }
  }
  EXPECT_EQ(narrowed, 2);
  ExpectSameSemantics(run, 6);
}

TEST(ConditionalSimplifierTest, UnreadConditionalReturnsAnEmptyTuple) {
  std::string hlo = kKeptConditional;
  hlo.replace(hlo.find("  ROOT s = f32[4] add(g0, g1)"),
              std::string("  ROOT s = f32[4] add(g0, g1)").size(), "  ROOT s = f32[4] add(x, y)");
  hlo.replace(hlo.find("  g0 = f32[4] get-tuple-element(k), index=0\n"),
              std::string("  g0 = f32[4] get-tuple-element(k), index=0\n").size(), "");
  hlo.replace(hlo.find("  g1 = f32[4] get-tuple-element(k), index=1\n"),
              std::string("  g1 = f32[4] get-tuple-element(k), index=1\n").size(), "");
  PassRun run = RunPass("simplify-conditional", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ENTRY\nCHECK: %k = () conditional(");
}

// A branch that only passes its operand on is cheaper than a select of both: XLA keeps it.
TEST(ConditionalSimplifierTest, KeepsAConditionalWithAnEmptyBranch) {
  PassRun run = RunPass("simplify-conditional", R"(HloModule m
on_true {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
on_false {
  ROOT b = f32[4] parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = f32[4] conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
