// broadcast_canonicalizer: unsorted broadcast dimensions become a transpose.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

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

// A bitcast reads the broadcast's memory in its layout: the transpose that replaces it keeps
// that layout, so the bitcast reads the same values.
TEST(BroadcastCanonicalizerTest, ReplacementKeepsTheBroadcastsLayout) {
  constexpr char kHlo[] = R"(HloModule m
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  b = f32[3,2]{0,1} broadcast(p), dimensions={1,0}
  ROOT c = f32[6]{0} bitcast(b)
}
)";
  PassRun run = RunPass("broadcast_canonicalizer", kHlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3]{1,0} broadcast(
CHECK: f32[3,2]{0,1} transpose(
CHECK: ROOT {{.*}} bitcast()");
  ExpectSameSemantics(run);
}

}  // namespace
}  // namespace hlogym::testing
