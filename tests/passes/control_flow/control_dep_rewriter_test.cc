// control-dep-rewriter: control_dep custom calls become control edges.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

void ExpectError(std::string_view hlo, std::string_view name) {
  auto module = ParseModule(hlo, "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string before = PrintModule(**module);
  auto pass = PassRegistry::Builtin().Create("control-dep-rewriter");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.status().message()).find(std::string(name)), std::string::npos)
      << changed.status();
  EXPECT_EQ(before, PrintModule(**module));
}

TEST(ControlDepRewriterTest, BecomesAControlEdge) {
  constexpr std::string_view kHlo = R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  s = f32[3] sine(a)
  l = f32[3] log(b)
  order = () custom-call(s, l), custom_call_target="control_dep"
  ROOT t = (f32[3], f32[3]) tuple(s, l)
}
)";
  PassRun run = RunPass("control-dep-rewriter", kHlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: control_dep
CHECK: %l = f32[3] log(f32[3] %b), control-predecessors={%s}
)");
  const Computation* entry = run.module->entry_computation();
  EXPECT_EQ(entry->instruction_count(), 5);
  const Instruction* root = entry->root_instruction();
  ASSERT_EQ(root->operand(0)->control_successors().size(), 1u);
  EXPECT_EQ(root->operand(0)->control_successors()[0], root->operand(1));
  ExpectSameSemantics(run);
}

TEST(ControlDepRewriterTest, ExistingEdgeAndNestedComputation) {
  PassRun run = RunPass("control-dep-rewriter", R"(HloModule m
body {
  q = f32[] parameter(0)
  x = f32[] exponential(q)
  y = f32[] negate(q), control-predecessors={x}
  c = () custom-call(x, y), custom_call_target="control_dep"
  ROOT r = f32[] add(x, y)
}

ENTRY main {
  p = f32[] parameter(0)
  ROOT k = f32[] call(p), to_apply=body
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: custom-call
CHECK: %y = f32[] negate(f32[] %q), control-predecessors={%x}
)");
}

TEST(ControlDepRewriterTest, NoChangeWithoutControlDeps) {
  PassRun run = RunPass("control-dep-rewriter", R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  c = () custom-call(a), custom_call_target="control_dependency"
  ROOT n = f32[3] negate(a)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ControlDepRewriterTest, WrongOperandCountIsAnError) {
  ExpectError(R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  cd3 = () custom-call(a, b, a), custom_call_target="control_dep"
  ROOT n = f32[3] add(a, b)
}
)",
              "cd3");
}

TEST(ControlDepRewriterTest, UsedControlDepIsAnError) {
  ExpectError(R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  used = () custom-call(a, b), custom_call_target="control_dep"
  ROOT t = (f32[3], ()) tuple(a, used)
}
)",
              "used");
}

TEST(ControlDepRewriterTest, CycleIsAnErrorAndUndoesEarlierEdges) {
  ExpectError(R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  e = f32[3] exponential(a)
  n = f32[3] negate(e)
  fine = () custom-call(b, e), custom_call_target="control_dep"
  cyc = () custom-call(n, e), custom_call_target="control_dep"
  ROOT t = (f32[3], f32[3]) tuple(n, b)
}
)",
              "cyc");
}

}  // namespace
}  // namespace hlogym::testing
