// convert-memory-placement-to-internal-annotations: annotate_device_placement
// custom calls become MoveToHost / MoveToDevice / PinToDevice custom calls.
// (No evaluator equivalence: the evaluator models these custom calls as
// opaque functions of their target, not as the identity XLA means.)
#include "passes/pass_test_util.h"
#include "text/parser.h"

namespace hlogym::testing {
namespace {

constexpr char kPass[] = "convert-memory-placement-to-internal-annotations";

TEST(ConvertMemoryPlacementTest, PinnedHostBecomesMoveToHost) {
  PassRun run = RunPass(kPass, R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  a = f32[4] custom-call(e), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_host"}, sharding={replicated}
  ROOT m = f32[4] multiply(a, a)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: annotate_device_placement
CHECK: = f32[4] custom-call(f32[4] %e), custom_call_target="MoveToHost", sharding={replicated}
CHECK: ROOT %m = f32[4] multiply(
)");
  EXPECT_EQ(run.after.find("frontend_attributes"), std::string::npos) << run.after;
}

TEST(ConvertMemoryPlacementTest, EveryMemorySpace) {
  PassRun run = RunPass(kPass, R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] custom-call(p), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="unpinned_host"}
  b = f32[4] custom-call(a), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}
  c = f32[4] custom-call(b), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_device"}
  d = f32[4] custom-call(c), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="vmem"}
  ROOT n = f32[4] negate(d)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: annotate_device_placement
CHECK: custom_call_target="MoveToHost"
CHECK: custom_call_target="MoveToDevice"
CHECK: custom_call_target="PinToDevice"
CHECK: custom_call_target="PinToDeviceSram"
CHECK: ROOT %n = f32[4] negate(
)");
  EXPECT_EQ(run.module->entry_computation()->instruction_count(), 6);
}

TEST(ConvertMemoryPlacementTest, RootInANestedComputationAndControlEdges) {
  PassRun run = RunPass(kPass, R"(HloModule m
callee {
  q = f32[4] parameter(0)
  y = f32[4] negate(q)
  ROOT a = f32[4] custom-call(q), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}, control-predecessors={y}
}

ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=callee
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: callee
CHECK: ROOT {{.*}} = f32[4] custom-call(f32[4] %q), custom_call_target="MoveToDevice", control-predecessors={%y}
)");
}

TEST(ConvertMemoryPlacementTest, NoChangeCases) {
  // No placement attribute, an unknown placement, or another target.
  PassRun run = RunPass(kPass, R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] custom-call(p), custom_call_target="annotate_device_placement"
  b = f32[4] custom-call(a), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="somewhere"}
  c = f32[4] custom-call(b), custom_call_target="MoveToHost"
  ROOT d = f32[4] custom-call(c), custom_call_target="foo", frontend_attributes={_xla_buffer_placement="device"}
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ConvertMemoryPlacementTest, BadAnnotationsAreErrorsNamingThem) {
  for (const char* hlo : {R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT bad = f32[4] custom-call(p, p), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_host"}
}
)",
                          R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT bad = f32[2] custom-call(p), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}
}
)"}) {
    auto module = ParseModule(hlo, "test.hlo");
    ASSERT_TRUE(module.ok()) << module.status();
    const std::string before = PrintModule(**module);
    auto pass = PassRegistry::Builtin().Create(kPass);
    ASSERT_TRUE(pass.ok());
    auto changed = (*pass)->Run(**module);
    ASSERT_FALSE(changed.ok());
    EXPECT_NE(std::string(changed.status().message()).find("bad"), std::string::npos)
        << changed.status();
    EXPECT_EQ(PrintModule(**module), before);
  }
}

}  // namespace
}  // namespace hlogym::testing
