// convert-mover: widening converts sink, narrowing converts rise.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ConvertMoverTest, MovesWideningConvertDownThroughPad) {
  PassRun run = RunPass("convert-mover", R"(HloModule m
ENTRY main {
  x = f16[4] parameter(0)
  c = f32[4] convert(x)
  z = f32[] constant(0)
  ROOT p = f32[6] pad(c, z), padding=1_1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f16[] convert(f32[] %z)
CHECK: f16[6] pad(f16[4] %x,
CHECK: ROOT {{.*}} = f32[6] convert()");
}

TEST(ConvertMoverTest, KeepsWideningConvertWhenConstantIsNotRepresentable) {
  PassRun run = RunPass("convert-mover", R"(HloModule m
ENTRY main {
  x = f16[4] parameter(0)
  c = f32[4] convert(x)
  z = f32[] constant(0.1)
  ROOT p = f32[6] pad(c, z), padding=1_1
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ConvertMoverTest, MovesNarrowingConvertUpThroughConcatenate) {
  PassRun run = RunPass("convert-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[4,3] parameter(1)
  cat = f32[6,3] concatenate(a, b), dimensions={0}
  ROOT c = bf16[6,3] convert(cat)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: bf16[2,3] convert(f32[2,3] %a)
CHECK: bf16[4,3] convert(f32[4,3] %b)
CHECK: ROOT {{.*}} = bf16[6,3] concatenate()");
}

TEST(ConvertMoverTest, KeepsConvertsWithSharedOrNonCommutingOperands) {
  PassRun run = RunPass("convert-mover", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  t = f32[3,2] transpose(a), dimensions={1,0}
  c1 = bf16[3,2] convert(t)
  n = f32[3,2] negate(t)
  x = f16[4] parameter(1)
  w = f32[4] convert(x)
  e = f32[4] exponential(w)
  ROOT r = (bf16[3,2], f32[3,2], f32[4]) tuple(c1, n, e)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
