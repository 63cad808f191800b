// gather_expander: gathers -> counted while loops (or broadcasts).
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// Two batch dimensions, index_vector_dim in the middle, an offset dimension
// before a batch dimension in the output.
constexpr char kBatchedGather[] = R"(HloModule m
ENTRY main {
  x = f32[5,4,3] parameter(0)
  i = s32[2,2,3] parameter(1)
  ROOT g = f32[2,4,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0,2}, index_vector_dim=1, slice_sizes={1,4,1}
}
)";

TEST(GatherExpanderTest, AllModeBuildsCountedLoop) {
  PassRun run = RunPass("gather_expander-all", kBatchedGather);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_cond
CHECK: s32[] constant(6)
CHECK: ROOT {{.*}} compare({{.*}}), direction=LT
CHECK: while_body
CHECK: add(
CHECK: s32[1,2] dynamic-slice({{.*}}), dynamic_slice_sizes={1,2}
CHECK: f32[1,4,1] dynamic-slice({{.*}}), dynamic_slice_sizes={1,4,1}
CHECK: f32[1,4] reshape(
CHECK: f32[6,4] dynamic-update-slice(
CHECK: ENTRY
CHECK: s32[2,3,2] transpose(s32[2,2,3] %i), dimensions={0,2,1}
CHECK: s32[6,2] reshape(
CHECK: f32[6,4] broadcast(
CHECK: while({{.*}}), condition=%while_cond, body=%while_body
CHECK: f32[6,4] get-tuple-element({{.*}}), index=3
CHECK: f32[2,3,4] reshape(
CHECK: ROOT {{.*}} f32[2,4,3] transpose({{.*}}), dimensions={0,2,1}
CHECK-NOT: gather(
)");
  ExpectSameSemantics(run, 5);
}

TEST(GatherExpanderTest, LoopIsBuiltAsXlaBuildsIt) {
  // XLA's index plumbing (the induction variable as a padded vector, the
  // operand start as a concatenate, an unused zero vector) and its loop
  // computations' dead placeholder roots: the op count matches XLA's.
  PassRun run = RunPass("gather_expander", R"(HloModule m
ENTRY main {
  x = f32[10] parameter(0)
  i = s32[1,1] parameter(1)
  ROOT g = f32[1] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_cond
CHECK: pred[] broadcast(pred[]
CHECK: while_body
CHECK: s32[1] constant({0})
CHECK: s32[2] pad(s32[1] {{.*}}), padding=0_1
CHECK: s32[1] concatenate(
CHECK: s32[1] pad(s32[1] {{.*}}), padding=0_0
CHECK: ENTRY
CHECK: s32[1,1] reshape(s32[1,1] %i)
)");
  auto module = ParseModule(run.after, "after.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  // The count of XLA's gather_expander output for this gather.
  EXPECT_EQ((*module)->instruction_count(), 57) << run.after;
  ExpectSameSemantics(run);
}

TEST(GatherExpanderTest, SimpleModeSkipsLoopsOverSeveralIndices) {
  EXPECT_FALSE(RunPass("gather_expander", kBatchedGather).changed);
}

TEST(GatherExpanderTest, SimpleModeExpandsSingleIndexGather) {
  PassRun run = RunPass("gather_expander", R"(HloModule m
ENTRY main {
  x = f32[6,5] parameter(0)
  i = s64[] parameter(1)
  ROOT g = f32[5] gather(x, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=0, slice_sizes={1,5}
}
)");
  EXPECT_TRUE(run.changed);
  // As XLA does on a loop of one iteration, the induction variable is converted to the indices'
  // type, and the convert is left unused.
  EXPECT_CHECKS(run.after, R"(
CHECK: s64[] convert(s32[] %get-tuple-element.1)
CHECK: s64[1] dynamic-slice(
CHECK: f32[1,5] dynamic-slice({{.*}}, s64[] {{.*}}, s64[] {{.*}}), dynamic_slice_sizes={1,5}
CHECK: ENTRY
CHECK: s64[1] reshape(s64[] %i)
CHECK: while(
CHECK: ROOT {{.*}} f32[5] reshape(
)");
  ExpectSameSemantics(run, 5);
}

TEST(GatherExpanderTest, WholeOperandSliceBecomesBroadcast) {
  PassRun run = RunPass("gather_expander", R"(HloModule m
ENTRY main {
  x = f32[1,5] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,5] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[5] reshape(f32[1,5] %x)
CHECK: ROOT {{.*}} f32[3,5] broadcast({{.*}}), dimensions={1}
CHECK-NOT: while
)");
  ExpectSameSemantics(run);
}

TEST(GatherExpanderTest, OutOfBoundsStartsAreClamped) {
  PassRun run = RunPass("gather_expander-all", R"(HloModule m
ENTRY main {
  x = f32[6,3] parameter(0)
  i = s32[3,2] constant({{5, 0}, {-1, 2}, {4, 1}})
  ROOT g = f32[3,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
}
)");
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, 5);
}

TEST(GatherExpanderTest, NoGatherNoChange) {
  PassRun run = RunPass("gather_expander-all", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
