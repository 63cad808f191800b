// all-reduce-folder: two chained all-reduces with compatible groups fold.
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllReduceFolderTest, FoldsCrossingGroups) {
  PassRun run = RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0,1},{2,3},{4,5},{6,7}}, to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={{0,2},{1,3},{4,6},{5,7}}, to_apply=sum
}
)",
                                                              ", replica_count=8"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} = f32[8] all-reduce(f32[8] %x), to_apply=%sum, replica_groups={{[{][{]0,1,2,3[}],[{]4,5,6,7[}][}]}}
)");
  EXPECT_EQ(run.after.find("ar0"), std::string::npos) << run.after;
}

TEST(AllReduceFolderTest, FreshChannelIdAndIotaGroups) {
  PassRun run = RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), channel_id=5, replica_groups=[2,2]<=[4], to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), channel_id=6, replica_groups=[2,2]<=[2,2]T(1,0), to_apply=sum
}
)",
                                                              ", replica_count=4"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: replica_groups={{[{][{]0,1,2,3[}][}]}}, channel_id=7
)");
}

TEST(AllReduceFolderTest, EvaluatesTheSame) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0}}, to_apply=sum
  ar1 = f32[8] all-reduce(ar0), replica_groups={{0}}, to_apply=sum
  ROOT n = f32[8] negate(ar1)
}
)");
  PassRun run = RunPass("all-reduce-folder", hlo);
  EXPECT_TRUE(run.changed);
  ExpectSameValues(hlo, *run.module);
}

TEST(AllReduceFolderTest, OverlappingGroupsDoNotFold) {
  PassRun run = RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={{0,1}}, to_apply=sum
}
)",
                                                              ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceFolderTest, NoFoldWithoutGroupsOrWithOtherReducer) {
  EXPECT_FALSE(RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={}, to_apply=sum
}
)"))
                   .changed);
  EXPECT_FALSE(RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0},{1}}, to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={{0,1}}, to_apply=mx
}
)",
                                                             ", replica_count=2"))
                   .changed);
}

TEST(AllReduceFolderTest, InnerWithOtherUsersStays) {
  PassRun run = RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0},{1}}, to_apply=sum
  ar1 = f32[8] all-reduce(ar0), replica_groups={{0,1}}, to_apply=sum
  ROOT t = (f32[8], f32[8]) tuple(ar0, ar1)
}
)",
                                                              ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceFolderTest, ConstrainedLayoutBlocksThePass) {
  PassRun run = RunPass("all-reduce-folder", CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  y = f32[8] all-reduce(x), replica_groups={}, constrain_layout=true, to_apply=sum
  ar0 = f32[8] all-reduce(y), replica_groups={{0},{1}}, to_apply=sum
  ROOT ar1 = f32[8] all-reduce(ar0), replica_groups={{0,1}}, to_apply=sum
}
)",
                                                              ", replica_count=2"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceFolderTest, UnknownReplicaIsAnError) {
  ExpectErrorNaming("all-reduce-folder",
                    CollectiveModule(R"(
ENTRY main {
  x = f32[8] parameter(0)
  ar0 = f32[8] all-reduce(x), replica_groups={{0},{1}}, to_apply=sum
  ROOT outer_ar = f32[8] all-reduce(ar0), replica_groups={{0,5}}, to_apply=sum
}
)",
                                     ", replica_count=2"),
                    "outer_ar");
}

}  // namespace
}  // namespace hlogym::testing
