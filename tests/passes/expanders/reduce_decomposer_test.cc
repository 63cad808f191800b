// reduce-decomposer: reduce results take the input layout, copies restore it.
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

TEST(ReduceDecomposerTest, ReducesInInputLayoutThenCopies) {
  PassRun run = RunPass("reduce-decomposer", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  p = f32[2,3,4]{0,1,2} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,4]{1,0} reduce(p, z), dimensions={1}, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                R"(CHECK: f32[2,4]{0,1} reduce(f32[2,3,4]{0,1,2} %p, f32[] %z), dimensions={1}
CHECK: ROOT {{.*}} = f32[2,4]{1,0} copy()");
}

TEST(ReduceDecomposerTest, KeepsMatchingLayouts) {
  PassRun run = RunPass("reduce-decomposer", std::string("HloModule m\n") + kAdd + R"(
ENTRY main {
  p = f32[2,3,4]{2,1,0} parameter(0)
  q = f32[2,3,4] parameter(1)
  z = f32[] constant(0)
  a = f32[2,4]{1,0} reduce(p, z), dimensions={1}, to_apply=add
  b = f32[2,4] reduce(q, z), dimensions={1}, to_apply=add
  ROOT t = (f32[2,4]{1,0}, f32[2,4]) tuple(a, b)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
