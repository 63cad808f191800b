// all_to_all_decomposer: array all-to-all -> slices, tuple all-to-all,
// concatenate.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllToAllDecomposerTest, SplitsIntoGroupSizeSlices) {
  PassRun run = RunPass("all_to_all_decomposer", R"(HloModule m
ENTRY main {
  x = f32[4,6]{1,0} parameter(0)
  ROOT a = f32[4,6]{1,0} all-to-all(x), channel_id=3, replica_groups={{0,1}}, dimensions={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[4,3]{1,0} slice(f32[4,6]{1,0} %x), slice={[0:4], [0:3]}
CHECK: f32[4,3]{1,0} slice(f32[4,6]{1,0} %x), slice={[0:4], [3:6]}
CHECK: (f32[4,3]{1,0}, f32[4,3]{1,0}) all-to-all({{.*}}), channel_id=3, replica_groups={{[{][{]}}0,1}}
CHECK-NOT: dimensions
CHECK: get-tuple-element({{.*}}), index=0
CHECK: get-tuple-element({{.*}}), index=1
CHECK: ROOT {{.*}} f32[4,6]{1,0} concatenate({{.*}}), dimensions={1}
)");
  // One replica: every all-to-all hands back its data.
  ExpectSameSemantics(run);
}

TEST(AllToAllDecomposerTest, IotaGroupsAndReplicaCount) {
  PassRun run = RunPass("all_to_all_decomposer", R"(HloModule m, replica_count=4
ENTRY main {
  x = s32[8] parameter(0)
  a = s32[8] all-to-all(x), replica_groups=[1,4]<=[4], dimensions={0}
  ROOT b = s32[8] all-to-all(a), replica_groups={}, dimensions={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (s32[2], s32[2], s32[2], s32[2]) all-to-all({{.*}}), replica_groups=[1,4]<=[4]
CHECK: concatenate(
CHECK: (s32[2], s32[2], s32[2], s32[2]) all-to-all({{.*}}), replica_groups={}
CHECK: ROOT {{.*}} concatenate(
)");
  ExpectSameSemantics(run);
}

TEST(AllToAllDecomposerTest, TupleAndConstrainedNoChange) {
  PassRun run = RunPass("all_to_all_decomposer", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  t = (f32[4], f32[4]) all-to-all(x, x), replica_groups={{0,1}}
  c = f32[4] all-to-all(x), replica_groups={{0,1}}, constrain_layout=true, dimensions={0}
  ROOT r = ((f32[4], f32[4]), f32[4]) tuple(t, c)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
