// topk-splitter: long TopK custom calls split into per-chunk TopKs and a
// sort of the candidates.
#include "passes/simplifiers/topk_splitter.h"

#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kComparator[] = R"(HloModule m
greater {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
)";

std::string Module(const std::string& entry) { return std::string(kComparator) + entry; }

// RunPass with a TopkSplitter of `threshold` (the registered one uses XLA's
// default, far too large to evaluate in a test).
PassRun RunSplitter(int64_t threshold, const std::string& hlo) {
  TopkSplitter pass(threshold);
  return RunPass(pass, hlo);
}

TEST(TopkSplitterTest, SplitsIntoChunksAndSortsTheCandidates) {
  PassRun run = RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT t = (f32[5], s32[5]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[4,1024]{{.*}} reshape(f32[4096] %x)
CHECK: (f32[4,5], s32[4,5]){{.*}} custom-call({{.*}}), custom_call_target="TopK", called_computations={%greater}
CHECK: s32[4]{{.*}} iota(), iota_dimension=0
CHECK: s32[]{{.*}} constant(1024)
CHECK: multiply(
CHECK: broadcast({{.*}}), dimensions={0}
CHECK: s32[4,5]{{.*}} add(
CHECK: (f32[20], s32[20]){{.*}} sort({{.*}}), dimensions={0}, is_stable=true, to_apply=%greater
CHECK: f32[5]{{.*}} slice(
CHECK: s32[5]{{.*}} slice(
CHECK: ROOT {{.*}} = (f32[5], s32[5]) tuple(
)");
  ExpectSameSemantics(run);
}

TEST(TopkSplitterTest, BatchOfOneKeepsItsShape) {
  PassRun run = RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[1,8192] parameter(0)
  t = (f32[1,3], s32[1,3]) custom-call(x), custom_call_target="TopK", to_apply=greater
  v = f32[1,3] get-tuple-element(t), index=0
  i = s32[1,3] get-tuple-element(t), index=1
  ROOT r = (f32[1,3], s32[1,3]) tuple(v, i)
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[8,1024]{{.*}} reshape(f32[1,8192] %x)
CHECK: (f32[8,3], s32[8,3]){{.*}} custom-call(
CHECK: (f32[24], s32[24]){{.*}} sort(
CHECK: f32[1,3]{{.*}} reshape(
CHECK: s32[1,3]{{.*}} reshape(
)");
  ExpectSameSemantics(run);
}

TEST(TopkSplitterTest, ChunkCountCappedAt1024) {
  PassRun run = RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4194304] parameter(0)
  ROOT t = (f32[2], s32[2]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[1024,4096]{{.*}} reshape(
CHECK: (f32[2048], s32[2048]){{.*}} sort(
)");
}

TEST(TopkSplitterTest, DefaultThresholdIsOneMebiElement) {
  const std::string big = Module(R"(
ENTRY main {
  x = f32[2097152] parameter(0)
  ROOT t = (f32[8], s32[8]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)");
  PassRun run = RunPass("topk-splitter", big);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: f32[2,1048576]{{.*}} reshape(");
  // Below the threshold, or a split into one chunk: left alone.
  EXPECT_FALSE(RunPass("topk-splitter", Module(R"(
ENTRY main {
  x = f32[1048576] parameter(0)
  ROOT t = (f32[8], s32[8]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"))
                   .changed);
  EXPECT_FALSE(RunPass("topk-splitter", Module(R"(
ENTRY main {
  x = f32[524288] parameter(0)
  ROOT t = (f32[8], s32[8]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"))
                   .changed);
}

TEST(TopkSplitterTest, IdempotentAfterSplitting) {
  PassRun first = RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT t = (f32[5], s32[5]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"));
  ASSERT_TRUE(first.changed);
  PassRun second = RunSplitter(1024, first.after);
  EXPECT_FALSE(second.changed);
}

TEST(TopkSplitterTest, NoChangeCases) {
  // k * k > n.
  EXPECT_FALSE(RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT t = (f32[65], s32[65]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"))
                   .changed);
  // n not a multiple of 1024.
  EXPECT_FALSE(RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4100] parameter(0)
  ROOT t = (f32[5], s32[5]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"))
                   .changed);
  // A real batch.
  EXPECT_FALSE(RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[2,4096] parameter(0)
  ROOT t = (f32[2,5], s32[2,5]) custom-call(x), custom_call_target="TopK", to_apply=greater
}
)"))
                   .changed);
  // Another custom call.
  EXPECT_FALSE(RunSplitter(1024, Module(R"(
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT t = (f32[5], s32[5]) custom-call(x), custom_call_target="SomethingElse", to_apply=greater
}
)"))
                   .changed);
}

TEST(TopkSplitterTest, ComparatorWithoutIndicesIsAnError) {
  auto module = ParseModule(R"(HloModule m
gt2 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT t = (f32[5], s32[5]) custom-call(x), custom_call_target="TopK", to_apply=gt2
}
)",
                            "test.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  TopkSplitter pass(1024);
  auto changed = pass.Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(std::string(changed.status().message()).find("t: TopK custom call needs"),
            std::string::npos)
      << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
