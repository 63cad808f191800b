// batched_gather_scatter_normalizer: batching dimensions -> iota index
// columns and collapsed/inserted dimensions.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(BatchedGatherScatterNormalizerTest, GatherWithTwoBatchingDims) {
  PassRun run = RunPass("batched_gather_scatter_normalizer", R"(HloModule m
ENTRY main {
  x = f32[4,8,16] parameter(0)
  i = s32[4,8,1,1] parameter(1)
  ROOT g = f32[4,8,1] gather(x, i), offset_dims={}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1}, index_vector_dim=3, slice_sizes={1,1,1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[4,8,1,1] iota(), iota_dimension=0
CHECK: s32[4,8,1,1] iota(), iota_dimension=1
CHECK: s32[4,8,1,3] concatenate({{.*}}, {{.*}}, s32[4,8,1,1] %i), dimensions={3}
CHECK: gather({{.*}}), offset_dims={}, collapsed_slice_dims={0,1,2}, start_index_map={0,1,2}, index_vector_dim=3, slice_sizes={1,1,1}
CHECK-NOT: batching
)");
  ExpectSameSemantics(run);
}

TEST(BatchedGatherScatterNormalizerTest, ScatterWithImplicitIndexVectorAndNarrowIndices) {
  // index_vector_dim equals the index rank (reshaped to a trailing 1), and a
  // batch of 300 does not fit s8 indices (converted to s32 first).
  PassRun run = RunPass("batched_gather_scatter_normalizer", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[300,6] parameter(0)
  i = s8[300] parameter(1)
  u = f32[300] parameter(2)
  ROOT s = f32[300,6] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[300,1] iota(), iota_dimension=0
CHECK: s32[300] convert(s8[300] %i)
CHECK: s32[300,1] reshape(
CHECK: s32[300,2] concatenate(
CHECK: scatter({{.*}}), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=%add
)");
  ExpectSameSemantics(run);
}

TEST(BatchedGatherScatterNormalizerTest, NoBatchingDimsNoChange) {
  PassRun run = RunPass("batched_gather_scatter_normalizer", R"(HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = f32[3,16] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
