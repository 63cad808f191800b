// scatter-slice-simplifier: scatters read only through truncating slices
// rebuilt on sliced operands.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kAdd[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string Module(const std::string& entry) { return std::string(kAdd) + entry; }

TEST(ScatterSliceSimplifierTest, SingleOutput) {
  PassRun run = RunPass("scatter-slice-simplifier", Module(R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[8] slice(s), slice={[0:8]}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: = f32[8] slice(f32[9] %x), slice={[0:8]}
CHECK: ROOT {{.*}} = f32[8] scatter(f32[8] {{.*}}, s32[6,1] %i, f32[6] %u), update_window_dims={}, inserted_window_dims={0}
CHECK-NOT: f32[9] scatter
)");
  ExpectSameSemantics(run);
}

TEST(ScatterSliceSimplifierTest, VariadicThroughGetTupleElements) {
  PassRun run = RunPass("scatter-slice-simplifier", R"(HloModule m
add2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] add(a, c)
  f = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(e, f)
}
ENTRY main {
  x = f32[5,3] parameter(0)
  y = s32[5,3] parameter(1)
  i = s32[4,1] parameter(2)
  u = f32[4,3] parameter(3)
  v = s32[4,3] parameter(4)
  s = (f32[5,3], s32[5,3]) scatter(x, y, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
  g0 = f32[5,3] get-tuple-element(s), index=0
  g1 = s32[5,3] get-tuple-element(s), index=1
  l0 = f32[4,3] slice(g0), slice={[0:4], [0:3]}
  l1 = s32[4,3] slice(g1), slice={[0:4], [0:3]}
  ROOT r = (f32[4,3], s32[4,3]) tuple(l0, l1)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (f32[4,3], s32[4,3]) scatter(
CHECK: f32[4,3] get-tuple-element(
CHECK: s32[4,3] get-tuple-element(
CHECK: ROOT %r = (f32[4,3], s32[4,3]) tuple(
)");
  EXPECT_EQ(run.after.find("(f32[5,3], s32[5,3]) scatter"), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(ScatterSliceSimplifierTest, ThroughElementwiseUsers) {
  PassRun run = RunPass("scatter-slice-simplifier", Module(R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  c = f32[9] parameter(3)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  e = f32[9] exponential(s)
  m = f32[9] maximum(e, c)
  a = f32[9] add(m, s)
  ROOT r = f32[7] slice(a), slice={[0:7]}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[7] scatter(
CHECK: f32[7] exponential(
CHECK: f32[7] slice(f32[9] %c), slice={[0:7]}
CHECK: f32[7] maximum(
CHECK: ROOT {{.*}} = f32[7] add(
)");
  EXPECT_EQ(run.after.find("f32[9] scatter"), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(ScatterSliceSimplifierTest, WindowOfOneInACutDimension) {
  PassRun run = RunPass("scatter-slice-simplifier", Module(R"(
ENTRY main {
  x = f32[6,4] parameter(0)
  i = s32[3,2] parameter(1)
  u = f32[3,1,2] parameter(2)
  s = f32[6,4] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  ROOT r = f32[5,4] slice(s), slice={[0:5], [0:4]}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ROOT {{.*}} = f32[5,4] scatter(");
  ExpectSameSemantics(run);
}

TEST(ScatterSliceSimplifierTest, NoChangeCases) {
  const char* cases[] = {
      // A wide window along the cut dimension (cutting would drop updates).
      R"(
ENTRY main {
  x = f32[6,4] parameter(0)
  i = s32[3,2] parameter(1)
  u = f32[3,2,2] parameter(2)
  s = f32[6,4] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  ROOT r = f32[5,4] slice(s), slice={[0:5], [0:4]}
}
)",
      // A slice that does not start at 0.
      R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[8] slice(s), slice={[1:9]}
}
)",
      // Another (non-elementwise) user.
      R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  l = f32[8] slice(s), slice={[0:8]}
  v = f32[9] reverse(s), dimensions={0}
  ROOT r = (f32[8], f32[9]) tuple(l, v)
}
)",
      // Slices with different limits.
      R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  l = f32[8] slice(s), slice={[0:8]}
  k = f32[7] slice(s), slice={[0:7]}
  ROOT r = (f32[8], f32[7]) tuple(l, k)
}
)",
      // An elementwise intermediary that is the root.
      R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  l = f32[8] slice(s), slice={[0:8]}
  ROOT e = f32[9] exponential(s)
}
)",
      // A slice that cuts nothing.
      R"(
ENTRY main {
  x = f32[9] parameter(0)
  i = s32[6,1] parameter(1)
  u = f32[6] parameter(2)
  s = f32[9] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = f32[9] slice(s), slice={[0:9]}
}
)",
  };
  for (const char* entry : cases) {
    PassRun run = RunPass("scatter-slice-simplifier", Module(entry));
    EXPECT_FALSE(run.changed) << run.after;
  }
}

}  // namespace
}  // namespace hlogym::testing
