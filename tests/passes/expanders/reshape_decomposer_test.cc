// reshape-decomposer: non-bitcast reshapes split into bitcast + copies.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ReshapeDecomposerTest, CopiesOperandIntoAlignedLayout) {
  PassRun run = RunPass("reshape-decomposer", R"(HloModule m
ENTRY main {
  x = f32[4,6]{0,1} parameter(0)
  ROOT r = f32[24]{0} reshape(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[4,6]{1,0} copy(f32[4,6]{0,1} %x)
CHECK: ROOT {{.*}} = f32[24]{0} reshape(f32[4,6]{1,0} )");
}

TEST(ReshapeDecomposerTest, CopiesResultWhenOnlyTheOutputCanAlign) {
  PassRun run = RunPass("reshape-decomposer", R"(HloModule m
ENTRY main {
  x = f32[24]{0} parameter(0)
  ROOT r = f32[4,6]{0,1} reshape(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[4,6]{1,0} reshape(f32[24]{0} %x)
CHECK: ROOT {{.*}} = f32[4,6]{0,1} copy()");
}

TEST(ReshapeDecomposerTest, KeepsBitcastReshapes) {
  PassRun run = RunPass("reshape-decomposer", R"(HloModule m
ENTRY main {
  x = f32[4,6]{1,0} parameter(0)
  y = f32[4,6] parameter(1)
  a = f32[2,2,6]{2,1,0} reshape(x)
  b = f32[24] reshape(y)
  c = f32[4,1,6]{2,0,1} reshape(x)
  ROOT t = (f32[2,2,6]{2,1,0}, f32[24], f32[4,1,6]{2,0,1}) tuple(a, b, c)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
