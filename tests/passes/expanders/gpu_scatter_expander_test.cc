// gpu_scatter_expander: XLA's GpuScatterExpander, the scatter_expander mode
// that expands the scatters XLA's GPU emitter cannot handle (elements wider
// than 64 bits), whatever their number of indices.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

std::string ScatterOf(const std::string& type) {
  return "HloModule m\nadd {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT s = " + type + "[] add(a, b)\n}\nENTRY main {\n  x = " + type +
         "[6,4] parameter(0)\n  i = s32[3,1] parameter(1)\n  u = " + type +
         "[3,4] parameter(2)\n  ROOT s = " + type +
         "[6,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
}

TEST(GpuScatterExpanderTest, ExpandsC128ScattersWithSeveralIndices) {
  PassRun run = RunPass("gpu_scatter_expander", ScatterOf("c128"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while(
CHECK-NOT: scatter(
)");
  ExpectSameSemantics(run);
}

TEST(GpuScatterExpanderTest, LeavesSupportedElementTypesAlone) {
  for (const char* type : {"f32", "f64", "c64", "s64", "bf16"}) {
    EXPECT_FALSE(RunPass("gpu_scatter_expander", ScatterOf(type)).changed) << type;
  }
}

TEST(GpuScatterExpanderTest, LeavesVariadicScattersAlone) {
  PassRun run = RunPass("gpu_scatter_expander", R"(HloModule m
add2 {
  a = c128[] parameter(0)
  b = f32[] parameter(1)
  c = c128[] parameter(2)
  d = f32[] parameter(3)
  e = c128[] add(a, c)
  f = f32[] add(b, d)
  ROOT t = (c128[], f32[]) tuple(e, f)
}
ENTRY main {
  x = c128[5] parameter(0)
  y = f32[5] parameter(1)
  i = s32[2,1] parameter(2)
  u = c128[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT s = (c128[5], f32[5]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
