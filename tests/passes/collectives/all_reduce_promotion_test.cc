// all-reduce-promotion: bf16 all-reduce and reduce-scatter computed in f32
// (CPU), 16-bit integer ones in 32 bits (GPU).
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllReducePromotionTest, Bf16AllReduceInF32) {
  PassRun run = RunPass("all-reduce-promotion", R"(HloModule m
sum {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = bf16[8]{0} parameter(0)
  ROOT ar = bf16[8]{0} all-reduce(x), replica_groups={}, to_apply=sum
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: sum_promoted
CHECK: x{{.*}} = f32[] parameter(0)
CHECK: y{{.*}} = f32[] parameter(1)
CHECK: f32[] add(
CHECK: f32[8]{0} convert(bf16[8]{0} %x)
CHECK: f32[8]{0} all-reduce(f32[8]{0} %convert), to_apply=%sum_promoted
CHECK: ROOT {{.*}} bf16[8]{0} convert(
)");
  ExpectSameSemantics(run);
}

TEST(AllReducePromotionTest, GpuPromotesS16ReduceScatter) {
  PassRun run = RunPass("all-reduce-promotion-gpu", R"(HloModule m
mx {
  a = s16[] parameter(0)
  b = s16[] parameter(1)
  ROOT s = s16[] maximum(a, b)
}
ENTRY main {
  x = s16[4,2] parameter(0)
  ROOT rs = s16[4,2] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=mx
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] maximum(
CHECK: s32[4,2] reduce-scatter(s32[4,2] %convert), dimensions={0}, to_apply=%mx_promoted
CHECK: ROOT {{.*}} s16[4,2] convert(
)");
  ExpectSameSemantics(run);
}

TEST(AllReducePromotionTest, F32AndTupleAllReducesNoChange) {
  PassRun run = RunPass("all-reduce-promotion", R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sumb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  y = bf16[8] parameter(1)
  ar = f32[8] all-reduce(x), replica_groups={}, to_apply=sum
  t = (bf16[8], bf16[8]) all-reduce(y, y), replica_groups={}, to_apply=sumb
  ROOT r = (f32[8], (bf16[8], bf16[8])) tuple(ar, t)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
