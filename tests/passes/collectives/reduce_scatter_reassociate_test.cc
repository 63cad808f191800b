// reduce-scatter-reassociate: op(reduce-scatter(a), reduce-scatter(b)) ->
// reduce-scatter(op(a, b)).
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(ReduceScatterReassociateTest, AddOfTwoReduceScatters) {
  PassRun run = RunPass("reduce-scatter-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  rs0 = f32[4] reduce-scatter(a), channel_id=3, replica_groups={{0,1}}, dimensions={0}, to_apply=sum
  rs1 = f32[4] reduce-scatter(b), channel_id=4, replica_groups={{0,1}}, dimensions={0}, to_apply=sum
  ROOT add = f32[4] add(rs0, rs1)
}
)",
                                                                       ", replica_count=2"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: = f32[8] add(f32[8] %a, f32[8] %b)
CHECK: ROOT {{.*}} = f32[4] reduce-scatter(f32[8] %{{.*}}), dimensions={0}, to_apply=%sum, channel_id=5, replica_groups={{[{][{]0,1[}][}]}}
)");
}

TEST(ReduceScatterReassociateTest, EvaluatesTheSame) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  a = f32[4,2] parameter(0)
  b = f32[4,2] parameter(1)
  rs0 = f32[4,2] reduce-scatter(a), replica_groups={}, dimensions={1}, to_apply=mx
  rs1 = f32[4,2] reduce-scatter(b), replica_groups={}, dimensions={1}, to_apply=mx
  ROOT m = f32[4,2] maximum(rs0, rs1)
}
)");
  PassRun run = RunPass("reduce-scatter-reassociate", hlo);
  EXPECT_TRUE(run.changed);
  ExpectSameValues(hlo, *run.module);
}

TEST(ReduceScatterReassociateTest, MismatchesStay) {
  // Different scatter dimensions.
  EXPECT_FALSE(RunPass("reduce-scatter-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[4,4] parameter(0)
  b = f32[4,4] parameter(1)
  rs0 = f32[4,4] reduce-scatter(a), replica_groups={}, dimensions={0}, to_apply=sum
  rs1 = f32[4,4] reduce-scatter(b), replica_groups={}, dimensions={1}, to_apply=sum
  ROOT s = f32[4,4] add(rs0, rs1)
}
)"))
                   .changed);
  // Reducer differs from the op.
  EXPECT_FALSE(RunPass("reduce-scatter-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  rs0 = f32[4] reduce-scatter(a), replica_groups={}, dimensions={0}, to_apply=sum
  rs1 = f32[4] reduce-scatter(b), replica_groups={}, dimensions={0}, to_apply=sum
  ROOT s = f32[4] multiply(rs0, rs1)
}
)"))
                   .changed);
  // Different scheduling groups.
  EXPECT_FALSE(RunPass("reduce-scatter-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  rs0 = f32[4] reduce-scatter(a), replica_groups={}, dimensions={0}, to_apply=sum, frontend_attributes={_scheduling_group_id="1"}
  rs1 = f32[4] reduce-scatter(b), replica_groups={}, dimensions={0}, to_apply=sum, frontend_attributes={_scheduling_group_id="2"}
  ROOT s = f32[4] add(rs0, rs1)
}
)"))
                   .changed);
}

TEST(ReduceScatterReassociateTest, OneSidedSchedulingGroupIsDropped) {
  PassRun run = RunPass("reduce-scatter-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  rs0 = f32[4] reduce-scatter(a), replica_groups={}, dimensions={0}, to_apply=sum, frontend_attributes={_scheduling_group_id="1"}
  rs1 = f32[4] reduce-scatter(b), replica_groups={}, dimensions={0}, to_apply=sum
  ROOT s = f32[4] add(rs0, rs1)
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("_scheduling_group_id"), std::string::npos) << run.after;
}

}  // namespace
}  // namespace hlogym::testing
