// dynamic-index-splitter: start-index vectors become scalar indices.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DynamicIndexSplitterTest, SplitsDynamicSliceIndexVector) {
  PassRun run = RunPass("dynamic-index-splitter", R"(HloModule m
ENTRY main {
  x = f32[5,6] parameter(0)
  i = s32[2] parameter(1)
  ROOT ds = f32[2,3] dynamic-slice(x, i), dynamic_slice_sizes={2,3}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[1] slice(s32[2] %i), slice={[0:1]}
CHECK: s32[] reshape(
CHECK: s32[1] slice(s32[2] %i), slice={[1:2]}
CHECK: s32[] reshape(
CHECK: ROOT {{.*}} f32[2,3] dynamic-slice(f32[5,6] %x, s32[] {{.*}}, s32[] {{.*}}), dynamic_slice_sizes={2,3}
)");
  ExpectSameSemantics(run);
}

TEST(DynamicIndexSplitterTest, SplitsDynamicUpdateSliceIndexVector) {
  PassRun run = RunPass("dynamic-index-splitter", R"(HloModule m
ENTRY main {
  x = f32[4,4,3] parameter(0)
  u = f32[2,1,3] parameter(1)
  i = s32[3] parameter(2)
  ROOT dus = f32[4,4,3] dynamic-update-slice(x, u, i)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: slice={[2:3]}
CHECK: ROOT {{.*}} dynamic-update-slice(f32[4,4,3] %x, f32[2,1,3] %u, s32[] {{.*}}, s32[] {{.*}}, s32[] {{.*}})
)");
  ExpectSameSemantics(run);
}

TEST(DynamicIndexSplitterTest, RankZeroOperandsAreReplaced) {
  PassRun run = RunPass("dynamic-index-splitter", R"(HloModule m
ENTRY main {
  x = f32[] parameter(0)
  u = f32[] parameter(1)
  ds = f32[] dynamic-slice(x), dynamic_slice_sizes={}
  dus = f32[] dynamic-update-slice(x, u)
  ROOT t = (f32[], f32[]) tuple(ds, dus)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: dynamic
CHECK: ROOT {{.*}} tuple(f32[] %x, f32[] %u)
)");
  ExpectSameSemantics(run);
}

TEST(DynamicIndexSplitterTest, ScalarIndicesNoChange) {
  PassRun run = RunPass("dynamic-index-splitter", R"(HloModule m
ENTRY main {
  x = f32[5,6] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT ds = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
