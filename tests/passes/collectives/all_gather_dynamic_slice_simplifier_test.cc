// all-gather-dynamic-slice-simplifier: dynamic-slice(all-gather(x)) at this
// device's shard -> x. (The input modules are not evaluable on one replica:
// their all-gathers widen their operand.)
#include "eval/equivalence.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

std::string Module(std::string_view header, std::string_view groups, std::string_view offset) {
  return "HloModule m" + std::string(header) + R"(
ENTRY main {
  x = f32[2,4] parameter(0)
  ag = f32[8,4] all-gather(x), dimensions={0}, replica_groups=)" +
         std::string(groups) + R"(
  id = u32[] replica-id()
  two = u32[] constant(2)
  three = u32[] constant(3)
  )" + std::string(offset) +
         R"(
  zero = u32[] constant(0)
  ds = f32[2,4] dynamic-slice(ag, off, zero), dynamic_slice_sizes={2,4}
  ROOT n = f32[2,4] negate(ds)
}
)";
}

TEST(AllGatherDynamicSliceSimplifierTest, ReplicaShardBecomesTheOperand) {
  PassRun run =
      RunPass("all-gather-dynamic-slice-simplifier",
              Module(", replica_count=4", "{{0,1,2,3}}", "off = u32[] multiply(id, two)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-gather
CHECK-NOT: dynamic-slice
CHECK: ROOT {{.*}}negate(f32[2,4] %x)
)");
}

TEST(AllGatherDynamicSliceSimplifierTest, EmptyGroupsUseTheReplicaCount) {
  PassRun run = RunPass("all-gather-dynamic-slice-simplifier",
                        Module(", replica_count=4", "{}", "off = u32[] multiply(two, id)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ROOT {{.*}}negate(f32[2,4] %x)");
}

TEST(AllGatherDynamicSliceSimplifierTest, TableLookupOffsetIsRecognized) {
  PassRun run = RunPass("all-gather-dynamic-slice-simplifier", R"(HloModule m, replica_count=8
ENTRY main {
  x = f32[2,4] parameter(0)
  ag = f32[8,4] all-gather(x), dimensions={0}, replica_groups={{0,2,4,6},{1,3,5,7}}
  table = s32[8] constant({0,0,2,2,4,4,6,6})
  id = u32[] replica-id()
  entry = s32[1] dynamic-slice(table, id), dynamic_slice_sizes={1}
  off = s32[] reshape(entry)
  zero = s32[] constant(0)
  ds = f32[2,4] dynamic-slice(ag, off, zero), dynamic_slice_sizes={2,4}
  ROOT n = f32[2,4] negate(ds)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ROOT {{.*}}negate(f32[2,4] %x)");
}

TEST(AllGatherDynamicSliceSimplifierTest, PartitionIdWithGlobalDeviceIds) {
  PassRun run = RunPass("all-gather-dynamic-slice-simplifier", R"(HloModule m, num_partitions=4
ENTRY main {
  x = f32[2,4] parameter(0)
  ag = f32[8,4] all-gather(x), channel_id=1, dimensions={0}, replica_groups=[1,4]<=[4], use_global_device_ids=true
  id = u32[] partition-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  zero = u32[] constant(0)
  ROOT ds = f32[2,4] dynamic-slice(ag, off, zero), dynamic_slice_sizes={2,4}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: ROOT {{.*}}x = f32[2,4]{{.*}} parameter(0)");
}

TEST(AllGatherDynamicSliceSimplifierTest, OtherShardsAreLeftAlone) {
  // Offset 3*id is not a shard boundary; groups {{0,2},{1,3}} of size 2
  // cannot cover 4 shards; a single replica has nothing to gather.
  for (const std::string& hlo :
       {Module(", replica_count=4", "{{0,1,2,3}}", "off = u32[] multiply(id, three)"),
        Module(", replica_count=4", "{{0,2},{1,3}}", "off = u32[] multiply(id, two)"),
        Module("", "{}", "off = u32[] multiply(id, two)"),
        Module(", replica_count=4", "{{0,1,2,3}}", "off = u32[] add(id, two)")}) {
    PassRun run = RunPass("all-gather-dynamic-slice-simplifier", hlo);
    EXPECT_FALSE(run.changed) << hlo;
  }
}

TEST(AllGatherDynamicSliceSimplifierTest, AllGatherWithAnotherUserIsLeftAlone) {
  PassRun run = RunPass("all-gather-dynamic-slice-simplifier", R"(HloModule m, replica_count=4
ENTRY main {
  x = f32[2,4] parameter(0)
  ag = f32[8,4] all-gather(x), dimensions={0}, replica_groups={{0,1,2,3}}
  id = u32[] replica-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  zero = u32[] constant(0)
  ds = f32[2,4] dynamic-slice(ag, off, zero), dynamic_slice_sizes={2,4}
  ROOT t = (f32[2,4], f32[8,4]) tuple(ds, ag)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
