// scatter_simplifier: scatters rewritten into the canonical form.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr const char* kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(ScatterSimplifierTest, InsertedWindowDimBecomesSizeOneUpdateDim) {
  PassRun run = RunPass("scatter_simplifier", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  o = f32[12,16] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5,16] parameter(2)
  ROOT s = f32[12,16] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[5,1,16] reshape(f32[5,16] %u)
CHECK: ROOT {{.*}} = f32[12,16] scatter(f32[12,16] %o, s32[5,1] %i, f32[5,1,16] {{.*}}), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add)");
}

TEST(ScatterSimplifierTest, FlattensIndicesAndMovesScatterDimsFirst) {
  PassRun run = RunPass("scatter_simplifier", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  o = f32[12,16] parameter(0)
  i = s32[2,3] parameter(1)
  u = f32[16,2,3] parameter(2)
  ROOT s = f32[12,16] scatter(o, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: s32[2,3,1] reshape(s32[2,3] %i)
CHECK: s32[6,1] reshape(
CHECK: f32[2,3,16] transpose(f32[16,2,3] %u), dimensions={1,2,0}
CHECK: f32[6,16] reshape(
CHECK: f32[6,1,16] reshape(
CHECK: ROOT {{.*}} = f32[12,16] scatter({{.*}}), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add)");
}

TEST(ScatterSimplifierTest, ScalarScatterBecomesCombiner) {
  PassRun run = RunPass("scatter_simplifier", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  o = f32[] parameter(0)
  i = s32[0] parameter(1)
  u = f32[] parameter(2)
  ROOT s = f32[] scatter(o, i, u), update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=0, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: ENTRY
CHECK-NOT: scatter(
CHECK: ROOT {{.*}} = f32[] add(f32[] %o, f32[] %u))");
}

TEST(ScatterSimplifierTest, KeepsSimplifiedScatter) {
  PassRun run = RunPass("scatter_simplifier", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  o = f32[12,16] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5,1,16] parameter(2)
  ROOT s = f32[12,16] scatter(o, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
