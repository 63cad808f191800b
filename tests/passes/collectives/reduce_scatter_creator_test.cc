// reduce-scatter-creator: all-reduce + dynamic-slice at this device's shard
// -> reduce-scatter. (The rewritten modules are not evaluable on one replica:
// their reduce-scatters narrow their operand.)
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kSum = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string Module(std::string_view header, std::string_view entry) {
  return "HloModule m" + std::string(header) + "\n" + std::string(kSum) + std::string(entry);
}

TEST(ReduceScatterCreatorTest, ReplicaShardBecomesReduceScatter) {
  PassRun run = RunPass("reduce-scatter-creator", Module(", replica_count=4", R"(
ENTRY main {
  x = f32[8,4] parameter(0)
  ar = f32[8,4] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] replica-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  zero = u32[] constant(0)
  ds = f32[2,4] dynamic-slice(ar, off, zero), dynamic_slice_sizes={2,4}
  ROOT n = f32[2,4] negate(ds)
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: all-reduce(
CHECK: f32[2,4] reduce-scatter(f32[8,4] %x), dimensions={0}, to_apply=%sum, replica_groups={}
CHECK-NOT: dynamic-slice(
CHECK: ROOT {{.*}}negate(
)");
}

TEST(ReduceScatterCreatorTest, SecondDimensionAndTableLookupWithGroups) {
  PassRun run = RunPass("reduce-scatter-creator", Module(", replica_count=4", R"(
ENTRY main {
  x = f32[3,8] parameter(0)
  ar = f32[3,8] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=sum
  table = s32[4] constant({0,4,0,4})
  id = u32[] replica-id()
  entry = s32[1] dynamic-slice(table, id), dynamic_slice_sizes={1}
  off = s32[] reshape(entry)
  zero = s32[] constant(0)
  ROOT ds = f32[3,4] dynamic-slice(ar, zero, off), dynamic_slice_sizes={3,4}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after,
                "CHECK: ROOT {{.*}}f32[3,4] reduce-scatter(f32[3,8] %x), dimensions={1}, "
                "to_apply=%sum, replica_groups={{[{][{]0,1[}],[{]2,3[}][}]}}");
}

TEST(ReduceScatterCreatorTest, ChannelIdIsFreshAndGlobalIdsAreKept) {
  PassRun run = RunPass("reduce-scatter-creator", Module(", num_partitions=2", R"(
ENTRY main {
  x = f32[4] parameter(0)
  ar = f32[4] all-reduce(x), channel_id=5, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
  id = u32[] partition-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  ROOT ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      "CHECK: ROOT {{.*}}f32[2] reduce-scatter(f32[4] %x), dimensions={0}, to_apply=%sum, "
      "channel_id=6, replica_groups={{[{][{]0,1[}][}]}}, use_global_device_ids=true");
}

TEST(ReduceScatterCreatorTest, UnevenSplitSlicesTheInput) {
  PassRun run = RunPass("reduce-scatter-creator", Module(", replica_count=4", R"(
ENTRY main {
  x = f32[9] parameter(0)
  ar = f32[9] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] replica-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  ROOT ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
}
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[8] slice(f32[9] %x), slice={[0:8]}
CHECK: ROOT {{.*}}f32[2] reduce-scatter(f32[8]
)");
}

TEST(ReduceScatterCreatorTest, NonMatchingPatternsAreLeftAlone) {
  const std::string wrong_offset = Module(", replica_count=4", R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] replica-id()
  three = u32[] constant(3)
  off = u32[] multiply(id, three)
  ROOT ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
}
)");
  const std::string two_users = Module(", replica_count=4", R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] replica-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
  ROOT t = (f32[2], f32[8]) tuple(ds, ar)
}
)");
  const std::string one_replica = Module("", R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] replica-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  ROOT ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
}
)");
  const std::string partition_id_cross_replica = Module(", replica_count=4", R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  id = u32[] partition-id()
  two = u32[] constant(2)
  off = u32[] multiply(id, two)
  ROOT ds = f32[2] dynamic-slice(ar, off), dynamic_slice_sizes={2}
}
)");
  for (const std::string& hlo :
       {wrong_offset, two_users, one_replica, partition_id_cross_replica}) {
    PassRun run = RunPass("reduce-scatter-creator", hlo);
    EXPECT_FALSE(run.changed) << hlo;
  }
}

}  // namespace
}  // namespace hlogym::testing
