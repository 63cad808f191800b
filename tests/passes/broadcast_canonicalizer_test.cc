// broadcast_canonicalizer: unsorted broadcast dimensions become a transpose.
#include "pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(BroadcastCanonicalizerTest, SortsDimensionsAndTransposesBack) {
  PassRun run = RunPass("broadcast_canonicalizer", R"(HloModule m
ENTRY main {
  x = f32[3,2] parameter(0)
  ROOT b = f32[2,4,3] broadcast(x), dimensions={2,0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[3,4,2] broadcast(f32[3,2] %x), dimensions={0,2}
CHECK: ROOT {{.*}} = f32[2,4,3] transpose({{.*}}), dimensions={2,1,0})");
}

TEST(BroadcastCanonicalizerTest, KeepsSortedBroadcasts) {
  PassRun run = RunPass("broadcast_canonicalizer", R"(HloModule m
ENTRY main {
  x = f32[3,2] parameter(0)
  ROOT b = f32[3,4,2] broadcast(x), dimensions={0,2}
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
