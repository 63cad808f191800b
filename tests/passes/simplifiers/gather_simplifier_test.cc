// gather_simplifier: gathers rewritten into the canonical form.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(GatherSimplifierTest, CollapsedRowGatherBecomesCanonicalPlusReshape) {
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: f32[3,1,4] gather(f32[5,4] %p, s32[3,1] %i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
CHECK: ROOT {{.*}} = f32[3,4] reshape()");
}

TEST(GatherSimplifierTest, KeepsStartIndexMapAndOperandAsTheyAre) {
  // A gather along dimension 1 (TF's GatherV2 with axis=1): the canonical
  // gather reads the operand untransposed, as XLA's does.
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[5,4] parameter(0)
  i = s32[3] parameter(1)
  ROOT g = f32[5,3] gather(p, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={5,1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK-NOT: transpose(f32[5,4] %p)
CHECK: s32[3,1] reshape(s32[3] %i)
CHECK: f32[3,5,1] gather(f32[5,4] %p, {{.*}}), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={1}, index_vector_dim=1, slice_sizes={5,1}
CHECK: f32[3,5] reshape(
CHECK: ROOT {{.*}} = f32[5,3] transpose({{.*}}), dimensions={1,0})");
}

TEST(GatherSimplifierTest, WindowGatherWithOneBatchDimOnlyMovesItsDims) {
  // Nothing collapsed and one batch dimension (MJX's walker steps gather
  // such windows): the canonical gather is transposed into place, no reshape.
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[4,3] parameter(0)
  i = s32[5,1] parameter(1)
  ROOT g = f32[2,5,3] gather(p, i), offset_dims={0,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[5,2,3] gather(f32[4,3] %p, s32[5,1] %i), offset_dims={1,2}
CHECK-NOT: reshape
CHECK: ROOT {{.*}} = f32[2,5,3] transpose({{.*}}), dimensions={1,0,2})");
  ExpectSameSemantics(run);
}

TEST(GatherSimplifierTest, GatherFromScalarBecomesBroadcast) {
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[] parameter(0)
  i = s32[3,0] parameter(1)
  ROOT g = f32[3] gather(p, i), offset_dims={}, collapsed_slice_dims={}, start_index_map={}, index_vector_dim=1, slice_sizes={}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: ROOT {{.*}} = f32[3] broadcast(f32[] %p), dimensions={}
CHECK-NOT: gather()");
}

TEST(GatherSimplifierTest, ZeroSliceSizeBecomesBroadcastOfZero) {
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,0] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[] constant(0)
CHECK: ROOT {{.*}} = f32[3,0] broadcast({{.*}}), dimensions={}
CHECK-NOT: gather()");
}

TEST(GatherSimplifierTest, KeepsCanonicalGather) {
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
ENTRY main {
  p = f32[5,4] parameter(0)
  i = s32[3,2] parameter(1)
  ROOT g = f32[3,2,4] gather(p, i), offset_dims={1,2}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,4}
}
)");
  EXPECT_FALSE(run.changed);
}

// As XLA's expanders, it leaves fused code alone: an older XLA's optimized
// module holds gathers inside fusions, which XLA's pipeline given it back keeps.
TEST(GatherSimplifierTest, LeavesGathersInsideFusions) {
  PassRun run = RunPass("gather_simplifier", R"(HloModule m
fused {
  p = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
ENTRY main {
  p = f32[5,4] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT f = f32[3,4] fusion(p, i), kind=kLoop, calls=fused
}
)");
  EXPECT_FALSE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: ROOT {{.*}} = f32[3,4] gather(f32[5,4] %p, s32[3,1] %i), offset_dims={1}, collapsed_slice_dims={0}
CHECK-NOT: reshape()");
}

}  // namespace
}  // namespace hlogym::testing
