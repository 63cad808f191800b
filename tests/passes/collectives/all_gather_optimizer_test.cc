// all-gather-optimizer: op(all-gather(a), all-gather(b)) ->
// all-gather(op(a, b)).
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllGatherOptimizerTest, AddOfTwoAllGathers) {
  PassRun run = RunPass("all-gather-optimizer", CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[2,4] parameter(1)
  ag0 = f32[4,4] all-gather(a), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ag1 = f32[4,4] all-gather(b), channel_id=2, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
  ROOT add = f32[4,4] add(ag0, ag1), metadata={op_name="plus"}
}
)",
                                                                 ", num_partitions=2"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: = f32[2,4] add(f32[2,4] %a, f32[2,4] %b)
CHECK: ROOT {{.*}} = f32[4,4] all-gather(f32[2,4] %{{.*}}), dimensions={0}, channel_id=1, replica_groups={{[{][{]0,1[}][}]}}, use_global_device_ids=true
)");
  EXPECT_CHECKS(run.after, R"(
CHECK: all-gather({{.*}}metadata={op_name="plus"}
)");
}

TEST(AllGatherOptimizerTest, EvaluatesTheSame) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[2,4] parameter(1)
  ag0 = f32[2,4] all-gather(a), replica_groups={}, dimensions={1}
  ag1 = f32[2,4] all-gather(b), replica_groups={}, dimensions={1}
  ROOT m = f32[2,4] multiply(ag0, ag1)
}
)");
  PassRun run = RunPass("all-gather-optimizer", hlo);
  EXPECT_TRUE(run.changed);
  ExpectSameValues(hlo, *run.module);
}

TEST(AllGatherOptimizerTest, MismatchesStay) {
  // Subtract is not commutative.
  EXPECT_FALSE(RunPass("all-gather-optimizer", CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[2,4] parameter(1)
  ag0 = f32[2,4] all-gather(a), replica_groups={}, dimensions={0}
  ag1 = f32[2,4] all-gather(b), replica_groups={}, dimensions={0}
  ROOT s = f32[2,4] subtract(ag0, ag1)
}
)"))
                   .changed);
  // Different replica groups.
  EXPECT_FALSE(RunPass("all-gather-optimizer", CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[2,4] parameter(1)
  ag0 = f32[2,4] all-gather(a), replica_groups={{0},{1}}, dimensions={0}
  ag1 = f32[2,4] all-gather(b), replica_groups={{1},{0}}, dimensions={0}
  ROOT s = f32[2,4] add(ag0, ag1)
}
)",
                                                                ", replica_count=2"))
                   .changed);
  // An all-gather with another user.
  EXPECT_FALSE(RunPass("all-gather-optimizer", CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[2,4] parameter(1)
  ag0 = f32[2,4] all-gather(a), replica_groups={}, dimensions={0}
  ag1 = f32[2,4] all-gather(b), replica_groups={}, dimensions={0}
  s = f32[2,4] add(ag0, ag1)
  ROOT t = (f32[2,4], f32[2,4]) tuple(s, ag1)
}
)"))
                   .changed);
}

}  // namespace
}  // namespace hlogym::testing
