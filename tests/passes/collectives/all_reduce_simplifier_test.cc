// all-reduce-simp: collectives over single participants become their
// operand; sums of replicated values become multiplies.
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllReduceSimplifierTest, SingleReplicaAllReduceBecomesOperand) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ar = f32[4] all-reduce(x), replica_groups={}, to_apply=sum
  ROOT n = f32[4] negate(ar)
}
)");
  PassRun run = RunPass("all-reduce-simp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-reduce(
CHECK: ROOT {{.*}} negate(f32[4] %x)
)");
  ExpectSameValues(hlo, *run.module);
}

TEST(AllReduceSimplifierTest, SingletonGroupsOfAManyReplicaModule) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={{0},{1},{2},{3}}, to_apply=sum
}
)",
                                                            ", replica_count=4"));
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.module->entry_computation()->root_instruction()->opcode(), Opcode::kParameter);
}

TEST(AllReduceSimplifierTest, IotaGroupsOfSizeOne) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups=[4,1]<=[4], to_apply=mx
}
)",
                                                            ", replica_count=4"));
  EXPECT_TRUE(run.changed);
}

TEST(AllReduceSimplifierTest, SumOfReplicatedConstantBecomesMultiply) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  c = f32[3] constant({1, 2, 3})
  ROOT ar = f32[3] all-reduce(c), replica_groups={{0,1},{2,3}}, to_apply=sum
}
)",
                                                            ", replica_count=4"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] constant(2)
CHECK: f32[] convert(
CHECK: f32[3] broadcast(
CHECK: ROOT {{.*}} = f32[3] multiply(f32[3] %c, f32[3] %
)");
}

TEST(AllReduceSimplifierTest, MaxOfReplicatedValueBecomesOperand) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  i = f32[3] iota(), iota_dimension=0
  e = f32[3] exponential(i)
  ROOT ar = f32[3] all-reduce(e), replica_groups={}, to_apply=mx
}
)",
                                                            ", replica_count=2"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-reduce
CHECK: ROOT {{.*}} exponential
)");
}

TEST(AllReduceSimplifierTest, NonReplicatedOperandOfManyReplicasStays) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), replica_groups={}, to_apply=sum
}
)",
                                                            ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceSimplifierTest, UnequalGroupsStay) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  c = f32[4] constant({1, 2, 3, 4})
  ROOT ar = f32[4] all-reduce(c), replica_groups={{0},{1,2}}, to_apply=sum
}
)",
                                                            ", replica_count=3"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceSimplifierTest, ChannelAllReduceNeedsSpmd) {
  const std::string entry = R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(x), channel_id=1, replica_groups={{0}}, use_global_device_ids=true, to_apply=sum
}
)";
  EXPECT_FALSE(RunPass("all-reduce-simp", CollectiveModule(entry)).changed);
  EXPECT_TRUE(
      RunPass("all-reduce-simp", CollectiveModule(entry, ", use_spmd_partitioning=true")).changed);
}

TEST(AllReduceSimplifierTest, TupleAllReduceStays) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT ar = (f32[4], f32[4]) all-reduce(x, y), replica_groups={}, to_apply=sum
}
)"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceSimplifierTest, NoOpAllGatherAndReduceScatter) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  x = f32[4,2] parameter(0)
  ag = f32[4,2] all-gather(x), replica_groups={}, dimensions={0}
  rs = f32[4,2] reduce-scatter(ag), replica_groups={}, dimensions={1}, to_apply=sum
  ROOT n = f32[4,2] negate(rs)
}
)");
  PassRun run = RunPass("all-reduce-simp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-gather
CHECK-NOT: reduce-scatter
CHECK: negate(f32[4,2] %x)
)");
  ExpectSameValues(hlo, *run.module);
}

TEST(AllReduceSimplifierTest, GrowingAllGatherStays) {
  PassRun run = RunPass("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4,2] parameter(0)
  ROOT ag = f32[8,2] all-gather(x), replica_groups={{0,1}}, dimensions={0}
}
)",
                                                            ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceSimplifierTest, AsyncWrappedNoOpAllGather) {
  const std::string hlo = CollectiveModule(R"(
wrapped {
  p = f32[4] parameter(0)
  ROOT ag = f32[4] all-gather(p), replica_groups={}, dimensions={0}
}

ENTRY main {
  x = f32[4] parameter(0)
  start = ((f32[4]), f32[4]) async-start(x), calls=wrapped
  done = f32[4] async-done(start)
  ROOT n = f32[4] negate(done)
}
)");
  PassRun run = RunPass("all-reduce-simp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: async-
CHECK: negate(f32[4] %x)
)");
  EXPECT_EQ(run.module->FindComputation("wrapped"), nullptr);
}

TEST(AllReduceSimplifierTest, BadReplicaGroupsNameTheInstruction) {
  ExpectErrorNaming("all-reduce-simp", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  ROOT broken_ar = f32[4] all-reduce(x), replica_groups={{0,x}}, to_apply=sum
}
)"),
                    "broken_ar");
}

}  // namespace
}  // namespace hlogym::testing
