// sub-byte-size-setter: layouts of sub-byte types carry E(bits), others none.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(SubByteSizeSetterTest, SetsElementSizeOnSubByteLayouts) {
  PassRun run = RunPass(
      "sub-byte-size-setter",
      R"(HloModule m, entry_computation_layout={(s4[4]{0}, u2[2,2]{1,0:T(2,2)S(1)})->(s8[4]{0}, u2[2,2]{1,0})}
ENTRY main {
  x = s4[4]{0} parameter(0)
  y = u2[2,2]{1,0:T(2,2)S(1)} parameter(1)
  c = s8[4]{0} convert(x)
  ROOT t = (s8[4]{0}, u2[2,2]{1,0}) tuple(c, y)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: entry_computation_layout={(s4[4]{0:E(4)}, u2[2,2]{1,0:T(2,2)E(2)S(1)})->(s8[4]{0}, u2[2,2]{1,0:E(2)})}
CHECK: s4[4]{0:E(4)} parameter(0)
CHECK: s8[4]{0} convert(
CHECK: u2[2,2]{1,0:T(2,2)E(2)S(1)} parameter(1)
CHECK: (s8[4]{0}, u2[2,2]{1,0:E(2)}) tuple(
)");
  ExpectSameSemantics(run);
}

TEST(SubByteSizeSetterTest, RemovesElementSizeFromWideTypes) {
  PassRun run = RunPass("sub-byte-size-setter", R"(HloModule m
ENTRY main {
  x = f32[4]{0:E(4)} parameter(0)
  ROOT n = f32[4]{0} negate(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[4]{0} parameter(0)
)");
}

TEST(SubByteSizeSetterTest, NoLayoutsOrNoSubByteTypesNoChange) {
  PassRun run =
      RunPass("sub-byte-size-setter",
              R"(HloModule m, entry_computation_layout={(f32[4]{0}, pred[2]{0})->f32[4]{0}}
ENTRY main {
  x = f32[4]{0} parameter(0)
  p = pred[2]{0} parameter(1)
  s = s4[4] constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
