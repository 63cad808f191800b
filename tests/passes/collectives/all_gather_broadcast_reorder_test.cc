// all-gather-bcast-reorder: all-gather(broadcast(x)) ->
// broadcast(all-gather(x)).
#include "absl/strings/str_cat.h"
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllGatherBroadcastReorderTest, GatherAlongAnOperandDimension) {
  PassRun run = RunPass("all-gather-bcast-reorder", CollectiveModule(R"(
ENTRY main {
  x = f32[128,5] parameter(0)
  bc = f32[5,4,8,128] broadcast(x), dimensions={3,0}
  ROOT ag = f32[5,4,8,256] all-gather(bc), channel_id=2, replica_groups={{0,1}}, dimensions={3}
}
)",
                                                                     ", replica_count=2"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: = f32[256,5] all-gather(f32[128,5] %x), dimensions={0}, channel_id=3, replica_groups={{[{][{]0,1[}][}]}}
CHECK: ROOT {{.*}} = f32[5,4,8,256] broadcast(f32[256,5] %{{.*}}), dimensions={3,0}
)");
}

TEST(AllGatherBroadcastReorderTest, GatherAlongABroadcastDimension) {
  PassRun run = RunPass("all-gather-bcast-reorder", CollectiveModule(R"(
ENTRY main {
  x = f32[128,5] parameter(0)
  bc = f32[5,4,8,128] broadcast(x), dimensions={3,0}
  ROOT ag = f32[5,12,8,128] all-gather(bc), replica_groups={{0,1,2}}, dimensions={1}
}
)",
                                                                     ", replica_count=3"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: = f32[1,128,5] reshape(f32[128,5] %x)
CHECK: = f32[3,128,5] all-gather(f32[1,128,5] %{{.*}}), dimensions={0}, replica_groups={{[{][{]0,1,2[}][}]}}
CHECK: = f32[5,3,4,8,128] broadcast(f32[3,128,5] %{{.*}}), dimensions={1,4,0}
CHECK: ROOT {{.*}} = f32[5,12,8,128] reshape(
)");
}

TEST(AllGatherBroadcastReorderTest, EvaluatesTheSame) {
  for (const char* dims : {"0", "1", "2"}) {
    const std::string hlo = CollectiveModule(absl::StrCat(R"(
ENTRY main {
  x = f32[3] parameter(0)
  bc = f32[2,3,4] broadcast(x), dimensions={1}
  ROOT ag = f32[2,3,4] all-gather(bc), replica_groups={}, dimensions={)",
                                                          dims, R"(}
}
)"));
    PassRun run = RunPass("all-gather-bcast-reorder", hlo);
    EXPECT_TRUE(run.changed) << dims;
    ExpectSameValues(hlo, *run.module);
  }
}

TEST(AllGatherBroadcastReorderTest, NoUniformDimensionsLeft) {
  PassRun run = RunPass("all-gather-bcast-reorder", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  bc = f32[1,4] broadcast(x), dimensions={1}
  ROOT ag = f32[2,4] all-gather(bc), replica_groups={{0,1}}, dimensions={0}
}
)",
                                                                     ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllGatherBroadcastReorderTest, NotABroadcastOperand) {
  PassRun run = RunPass("all-gather-bcast-reorder", CollectiveModule(R"(
ENTRY main {
  x = f32[2,4] parameter(0)
  ROOT ag = f32[4,4] all-gather(x), replica_groups={{0,1}}, dimensions={0}
}
)",
                                                                     ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllGatherBroadcastReorderTest, ConstrainedLayoutBlocksThePass) {
  PassRun run = RunPass("all-gather-bcast-reorder", CollectiveModule(R"(
ENTRY main {
  x = f32[4] parameter(0)
  bc = f32[3,4] broadcast(x), dimensions={1}
  ROOT ag = f32[3,4] all-gather(bc), replica_groups={}, dimensions={1}, constrain_layout=true
}
)"));
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
