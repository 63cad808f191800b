// conditional-canonicalizer: tuples on every edge of a conditional (its
// operands, branch parameters, branch roots and result), as the pinned XLA's
// pass dump shows for a diffrax solve's cond.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConditionalCanonicalizerTest, WrapsArrayInputsAndResultInTuples) {
  PassRun run = RunPass("conditional-canonicalizer", R"(HloModule m
on_true {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
on_false {
  ROOT a = f32[4] parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  c = f32[4] conditional(q, x, x), true_computation=on_true, false_computation=on_false
  ROOT e = f32[4] exponential(c)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: on_true
CHECK: %a = (f32[4]) parameter(0)
CHECK: get-tuple-element((f32[4]) %a), index=0
CHECK: ROOT {{.*}} = (f32[4]) tuple(f32[4] %n)
CHECK: on_false
CHECK: %a = (f32[4]) parameter(0)
CHECK: ROOT {{.*}} = (f32[4]) tuple(
CHECK: ENTRY
CHECK: tuple(f32[4] %x)
CHECK: tuple(f32[4] %x)
CHECK: %c = (f32[4]) conditional(pred[] %q, (f32[4])
CHECK: get-tuple-element((f32[4]) %c), index=0
CHECK: ROOT %e = f32[4] exponential(
)");
  // Two parameter reads, two root tuples, two operand tuples and one result
  // read: 7 instructions more (the pinned XLA's count on such a cond).
  int64_t instructions = 0;
  for (const auto& computation : run.module->computations()) {
    instructions += static_cast<int64_t>(computation->instructions().size());
  }
  EXPECT_EQ(instructions, 7 + 7);
  ExpectSameSemantics(run, 4);
}

// A tuple result is not enough: array branch parameters still get tuples.
TEST(ConditionalCanonicalizerTest, TupleResultWithArrayInputsGetsTupleInputs) {
  PassRun run = RunPass("conditional-canonicalizer", R"(HloModule m
on_true {
  a = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(a)
}
on_false {
  a = f32[4] parameter(0)
  ROOT t = (f32[4]) tuple(a)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  ROOT c = (f32[4]) conditional(q, x, x), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: on_true
CHECK: %a = (f32[4]) parameter(0)
CHECK: ENTRY
CHECK: ROOT %c = (f32[4]) conditional(pred[] %q, (f32[4])
)");
  ExpectSameSemantics(run, 4);
}

TEST(ConditionalCanonicalizerTest, TuplesOnEveryEdgeUnchanged) {
  PassRun run = RunPass("conditional-canonicalizer", R"(HloModule m
on_true {
  a = (f32[4]) parameter(0)
  e = f32[4] get-tuple-element(a), index=0
  ROOT t = (f32[4]) tuple(e)
}
on_false {
  ROOT a = (f32[4]) parameter(0)
}
ENTRY main {
  x = f32[4] parameter(0)
  q = pred[] parameter(1)
  tx = (f32[4]) tuple(x)
  ROOT c = (f32[4]) conditional(q, tx, tx), true_computation=on_true, false_computation=on_false
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
