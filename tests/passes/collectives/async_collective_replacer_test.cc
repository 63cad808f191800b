// async-collective-replacer: async collective pairs become synchronous
// collectives; control_dep custom calls on them go away.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kAdd = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string WithAdd(std::string_view entry) {
  return "HloModule m\n" + std::string(kAdd) + std::string(entry);
}

TEST(AsyncCollectiveReplacerTest, AllReduceStartDoneBecomesAllReduce) {
  const std::string hlo = WithAdd(R"(
ENTRY main {
  x = f32[4] parameter(0)
  start = f32[4] all-reduce-start(x), replica_groups={}, to_apply=sum, channel_id=3, metadata={op_name="psum"}, sharding={replicated}
  done = f32[4] all-reduce-done(start)
  ROOT n = f32[4] negate(done)
}
)");
  PassRun run = RunPass("async-collective-replacer", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-reduce-start
CHECK-NOT: all-reduce-done
CHECK: f32[4] all-reduce(f32[4] %x), to_apply=%sum, replica_groups={}, channel_id=3
CHECK-NOT: sharding=
CHECK: negate
)");
  EXPECT_CHECKS(run.after, R"(
CHECK: all-reduce({{.*}}metadata={op_name="psum"}
)");
  EXPECT_CHECKS(run.after, R"(
CHECK: all-reduce({{.*}}frontend_attributes={async_collective_name="start"}
)");
  ExpectSameSemantics(run);
}

TEST(AsyncCollectiveReplacerTest, AllGatherStartTakesTheDoneShape) {
  PassRun run = RunPass("async-collective-replacer", R"(HloModule m
ENTRY main {
  x = f32[2,4] parameter(0)
  start = (f32[2,4], f32[2,4]) all-gather-start(x), replica_groups={}, dimensions={0}
  ROOT done = f32[2,4] all-gather-done(start)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %{{[^ ]+}} = f32[2,4] all-gather(f32[2,4] %x), {{.*}}dimensions={0}
)");
  EXPECT_EQ(run.module->entry_computation()->root_instruction()->opcode(), Opcode::kAllGather);
}

TEST(AsyncCollectiveReplacerTest, CollectivePermuteStart) {
  PassRun run = RunPass("async-collective-replacer", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  start = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,0}}
  ROOT done = f32[4] collective-permute-done(start)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} = f32[4] collective-permute(f32[4] %x), source_target_pairs={{[{][{]0,0[}][}]}}
)");
}

TEST(AsyncCollectiveReplacerTest, AsyncWrappedAllReduceThroughUpdates) {
  PassRun run = RunPass("async-collective-replacer", WithAdd(R"(
wrapped {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups={}, to_apply=sum, frontend_attributes={zz="1"}
}

ENTRY main {
  x = f32[4] parameter(0)
  start = ((f32[4]), f32[4]) async-start(x), calls=wrapped, backend_config="cfg"
  update = ((f32[4]), f32[4]) async-update(start)
  ROOT done = f32[4] async-done(update)
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK-NOT: async-
CHECK: ROOT {{.*}} = f32[4] all-reduce(f32[4] %x), to_apply=%sum, replica_groups={}
)");
  // The wrapped root's frontend attributes are kept, the name joins them.
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: frontend_attributes={async_collective_name="start",zz="1"}
)");
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: backend_config="cfg"
)");
}

TEST(AsyncCollectiveReplacerTest, RemovesControlDepsOnThePair) {
  const std::string hlo = WithAdd(R"(
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  start = f32[4] all-reduce-start(x), replica_groups={}, to_apply=sum
  math = f32[4] multiply(y, y)
  done = f32[4] all-reduce-done(start)
  c0 = () custom-call(start, math), custom_call_target="control_dep"
  c1 = () custom-call(math, done), custom_call_target="control_dep"
  keep = () custom-call(x, y), custom_call_target="control_dep"
  ROOT r = f32[4] add(done, math)
}
)");
  PassRun run = RunPass("async-collective-replacer", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %c0
CHECK-NOT: %c1
CHECK: %keep = () custom-call(f32[4] %x, f32[4] %y), custom_call_target="control_dep"
)");
  EXPECT_EQ(run.after.find("all-reduce-start"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(AsyncCollectiveReplacerTest, DropsControlEdgesOfThePair) {
  PassRun run = RunPass("async-collective-replacer", WithAdd(R"(
ENTRY main {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  start = f32[4] all-reduce-start(x), replica_groups={}, to_apply=sum, control-predecessors={e}
  ROOT done = f32[4] all-reduce-done(start)
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("control-predecessors"), std::string::npos) << run.after;
}

TEST(AsyncCollectiveReplacerTest, NoChangeWithoutAsyncCollectives) {
  PassRun run = RunPass("async-collective-replacer", WithAdd(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={}, to_apply=sum
}
)"));
  EXPECT_FALSE(run.changed);
}

TEST(AsyncCollectiveReplacerTest, NoChangeForAsyncNonCollective) {
  PassRun run = RunPass("async-collective-replacer", R"(HloModule m
wrapped {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="foo"
}

ENTRY main {
  x = f32[4] parameter(0)
  start = ((f32[4]), f32[4]) async-start(x), calls=wrapped
  ROOT done = f32[4] async-done(start)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(AsyncCollectiveReplacerTest, StartWithoutItsDoneIsAnError) {
  auto module = ParseModule(WithAdd(R"(
ENTRY main {
  x = f32[4] parameter(0)
  start = f32[4] all-reduce-start(x), replica_groups={}, to_apply=sum
  done = f32[4] all-reduce-done(start)
  ROOT t = (f32[4], f32[4]) tuple(start, done)
}
)"),
                            "bad.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  std::string before = PrintModule(**module);
  auto pass = PassRegistry::Builtin().Create("async-collective-replacer");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("start"), std::string::npos) << changed.status();
  EXPECT_EQ(before, PrintModule(**module));
}

}  // namespace
}  // namespace hlogym::testing
