// scatter_expander: scatters -> counted while loops.
#include "absl/strings/str_replace.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// Scatter dimensions around a window dimension in the updates, index vector
// first in the indices, duplicate and out-of-bounds indices likely with
// random inputs.
constexpr char kScatterAdd[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6,4] parameter(0)
  i = s32[1,2,3] parameter(1)
  u = f32[2,4,3] parameter(2)
  ROOT s = f32[6,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add
}
)";

// The loop as XLA builds it (read from its pass dumps of a diffrax solve and of a scatter lowered
// by JAX 0.4.13, whose D it makes exact): the induction variable as a vector, padded into vector
// start indices that become a slice and a reshape per dimension; the start index in operand space
// compared with 0 and with size - window element-wise and reduced with `and` (later passes do
// not scalarize it); the updates transposed even where the permutation is the identity.
TEST(ScatterExpanderTest, AllModeBuildsCountedLoop) {
  PassRun run = RunPass("scatter_expander-all", kScatterAdd);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_cond
CHECK: s32[] constant(6)
CHECK: while_body
CHECK: %broadcast.5 = s32[1] broadcast(s32[] %get-tuple-element.1)
CHECK: %pad = s32[2] pad(s32[1] %broadcast.5, s32[] %{{.*}}), padding=0_1
CHECK: s32[1] slice(s32[2] %pad), slice={[0:1]}
CHECK: s32[1] slice(s32[2] %pad), slice={[1:2]}
CHECK: s32[1,1] dynamic-slice(
CHECK: %reshape.4 = s32[1] reshape(s32[1,1] %dynamic-slice)
CHECK: s32[1] slice(s32[1] %reshape.4), slice={[0:1]}
CHECK: %concatenate = s32[2] concatenate(s32[1] %slice.2, s32[1] %constant.8), dimensions={0}
CHECK: pred[2] compare(s32[2] %broadcast{{.*}}, s32[2] %concatenate), direction=LE
CHECK: s32[2] constant({5, 0})
CHECK: pred[2] compare({{.*}}), direction=GE
CHECK: pred[2] and(
CHECK: pred[] reduce({{.*}}), dimensions={0}, to_apply=%and.reduce_sub_computation
CHECK: s32[1] slice(s32[2] %concatenate), slice={[0:1]}
CHECK: f32[1,4] dynamic-slice({{.*}}), dynamic_slice_sizes={1,4}
CHECK: s32[2] pad(s32[1] %broadcast.5, s32[] %{{.*}}), padding=0_1
CHECK: f32[1,4] dynamic-slice({{.*}}), dynamic_slice_sizes={1,4}
CHECK: f32[4] reshape(f32[1,4]
CHECK: f32[1,4] reshape(f32[4]
CHECK: f32[1,4] map({{.*}}), dimensions={0,1}, to_apply=%add
CHECK: f32[1,4] select(
CHECK: f32[6,4] dynamic-update-slice(
CHECK: ENTRY
CHECK: s32[2,3,1] transpose(s32[1,2,3] %i), dimensions={1,2,0}
CHECK: s32[6,1] reshape(
CHECK: f32[2,3,4] transpose(f32[2,4,3] %u), dimensions={0,2,1}
CHECK: f32[6,4] reshape(
CHECK: while(
CHECK: ROOT {{.*}} f32[6,4] get-tuple-element({{.*}}), index=1
CHECK-NOT: scatter(
)");
  ExpectSameSemantics(run, 5);
}

// Index vectors of one component count as scalar indices, as in XLA: the loop carries s32[3],
// not s32[3,1], and the reshape XLA makes to tell is left unused for dce.
TEST(ScatterExpanderTest, OneComponentIndexVectorsAreScalarIndices) {
  PassRun run = RunPass("scatter_expander-all", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[5,2] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,2] parameter(2)
  ROOT s = f32[5,2] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_body
CHECK: s32[1] dynamic-slice(s32[3] %get-tuple-element
CHECK: ENTRY
CHECK: s32[3] reshape(s32[3,1] %i)
CHECK: s32[3] reshape(s32[3,1] %i)
CHECK: f32[3,2] transpose(f32[3,2] %u), dimensions={0,1}
CHECK: f32[3,2] reshape(
CHECK: (s32[], f32[5,2], s32[3], f32[3,2]) while(
)");
  ExpectSameSemantics(run, 5);
}

TEST(ScatterExpanderTest, SimpleModeSkipsSeveralIndices) {
  EXPECT_FALSE(RunPass("scatter_expander", kScatterAdd).changed);
}

TEST(ScatterExpanderTest, SimpleModeExpandsSingleIndexScatter) {
  PassRun run = RunPass("scatter_expander", R"(HloModule m
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] multiply(a, b)
}
ENTRY main {
  x = s32[5,6] parameter(0)
  i = s32[2] parameter(1)
  u = s32[2,3] parameter(2)
  ROOT s = s32[5,6] scatter(x, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=mul
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[1,2,3] dynamic-slice(
CHECK: s32[2,3] reshape(
CHECK: s32[2,3] map(
CHECK: ENTRY
CHECK: s32[1,2] reshape(s32[2] %i)
CHECK: s32[2,3] transpose(s32[2,3] %u), dimensions={0,1}
CHECK: s32[1,2,3] reshape(s32[2,3] %transpose)
CHECK: while(
)");
  ExpectSameSemantics(run, 5);
}

TEST(ScatterExpanderTest, ValidIndicesInBounds) {
  // Index 2 of 4 with a window of 2: in bounds, the update applies.
  PassRun run = RunPass("scatter_expander", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  i = s32[1] constant({2})
  u = f32[2] parameter(1)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, 5);
}

TEST(ScatterExpanderTest, OutOfBoundsWindowsAreSkipped) {
  // Rows 5 and -1 do not fit a window of 2 rows in 6: those updates are
  // dropped; row 4 fits exactly.
  PassRun run = RunPass("scatter_expander-all", R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6,3] parameter(0)
  i = s32[3,2] constant({{5, 0}, {-1, 0}, {4, 1}})
  u = f32[3,2,2] parameter(1)
  ROOT s = f32[6,3] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, 5);
}

// A loop of one iteration over s64 indices (PyTorch/XLA's index_put of one element): XLA
// converts the induction variable to s64 in the body and uses it nowhere; the dead convert counts
// until dce (read from the pinned XLA's dumps of torch's affine_grid). Over s32 indices, or over
// more than one index, there is none.
constexpr char kOneS64Index[] = R"(HloModule m
keep_update {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[8] parameter(0)
  i = s64[1,1] constant({ {7} })
  u = f32[1] parameter(1)
  ROOT s = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=keep_update
}
)";

TEST(ScatterExpanderTest, OneIterationConvertsTheInductionVariableToTheIndexType) {
  PassRun run = RunPass("scatter_expander", kOneS64Index);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_body
CHECK: %get-tuple-element.1 = s32[] get-tuple-element(
CHECK: s64[] convert(s32[] %get-tuple-element.1)
CHECK: ENTRY)");
  ExpectSameSemantics(run, 3);
  const std::string s32_indices = absl::StrReplaceAll(kOneS64Index, {{"s64", "s32"}});
  const std::string two_indices = absl::StrReplaceAll(
      kOneS64Index, {{"s64[1,1] constant({ {7} })", "s64[2,1] constant({ {7}, {1} })"},
                     {"f32[1] parameter", "f32[2] parameter"}});
  for (const std::string& other : {s32_indices, two_indices}) {
    PassRun without = RunPass("scatter_expander-all", other);
    EXPECT_TRUE(without.changed);
    EXPECT_EQ(without.after.find("convert("), std::string::npos) << without.after;
  }
}

TEST(ScatterExpanderTest, NoScatterNoChange) {
  PassRun run = RunPass("scatter_expander-all", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
