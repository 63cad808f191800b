// real_imag_expander: real/imag of non-complex operands.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(RealImagExpanderTest, RealIsTheOperandImagIsZero) {
  PassRun run = RunPass("real_imag_expander", R"(HloModule m
ENTRY main {
  x = f32[2,3] parameter(0)
  re = f32[2,3] real(x)
  im = f32[2,3] imag(x)
  ROOT s = f32[2,3] add(re, im)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[] constant(0)
CHECK: f32[2,3] broadcast(f32[] %constant{{.*}}), dimensions={}
CHECK: ROOT %s = f32[2,3] add(f32[2,3] %x, f32[2,3] %broadcast
CHECK-NOT: real(
CHECK-NOT: imag(
)");
  ExpectSameSemantics(run);
}

TEST(RealImagExpanderTest, ComplexOperandsAreLeftAlone) {
  PassRun run = RunPass("real_imag_expander", R"(HloModule m
ENTRY main {
  x = c64[2] parameter(0)
  re = f32[2] real(x)
  im = f32[2] imag(x)
  ROOT t = (f32[2], f32[2]) tuple(re, im)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
