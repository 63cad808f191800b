// all-reduce-reassociate: op(all-reduce(a), all-reduce(b)) ->
// all-reduce(op(a, b)).
#include "passes/collectives/collective_rewrite_test_util.h"

namespace hlogym::testing {
namespace {

TEST(AllReduceReassociateTest, AddOfTwoSums) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={}, to_apply=sum
  ar1 = f32[8] all-reduce(b), replica_groups={}, to_apply=sum
  ROOT add = f32[8] add(ar0, ar1)
}
)");
  PassRun run = RunPass("all-reduce-reassociate", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %add = f32[8] add(f32[8] %a, f32[8] %b)
CHECK: ROOT {{.*}} = f32[8] all-reduce(f32[8] %add), to_apply=%sum, replica_groups={}
)");
  EXPECT_EQ(run.after.find("ar0"), std::string::npos);
  ExpectSameValues(hlo, *run.module);
}

TEST(AllReduceReassociateTest, MaxThroughReshapeAndPad) {
  const std::string hlo = CollectiveModule(R"(
ENTRY main {
  a = f32[2,4] parameter(0)
  b = f32[6] parameter(1)
  ar0 = f32[2,4] all-reduce(a), replica_groups={}, to_apply=mx
  r = f32[8] reshape(ar0)
  ar1 = f32[6] all-reduce(b), replica_groups={}, to_apply=mx
  ninf = f32[] constant(-inf)
  p = f32[8] pad(ar1, ninf), padding=1_1
  ROOT m = f32[8] maximum(r, p)
}
)");
  PassRun run = RunPass("all-reduce-reassociate", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: reshape(f32[2,4] %a)
CHECK: pad(f32[6] %b
CHECK: ROOT {{.*}} all-reduce(f32[8] %m)
)");
  ExpectSameValues(hlo, *run.module);
}

TEST(AllReduceReassociateTest, PadWithNonIdentityStays) {
  PassRun run = RunPass("all-reduce-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[6] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={}, to_apply=sum
  ar1 = f32[6] all-reduce(b), replica_groups={}, to_apply=sum
  one = f32[] constant(1)
  p = f32[8] pad(ar1, one), padding=1_1
  ROOT s = f32[8] add(ar0, p)
}
)"));
  EXPECT_FALSE(run.changed);
}

TEST(AllReduceReassociateTest, MismatchesStay) {
  // Different reducer than the op.
  EXPECT_FALSE(RunPass("all-reduce-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={}, to_apply=mx
  ar1 = f32[8] all-reduce(b), replica_groups={}, to_apply=mx
  ROOT s = f32[8] add(ar0, ar1)
}
)"))
                   .changed);
  // Different groups.
  EXPECT_FALSE(RunPass("all-reduce-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={{0,1}}, to_apply=sum
  ar1 = f32[8] all-reduce(b), replica_groups={{0},{1}}, to_apply=sum
  ROOT s = f32[8] add(ar0, ar1)
}
)",
                                                                  ", replica_count=2"))
                   .changed);
  // An all-reduce with a second user.
  EXPECT_FALSE(RunPass("all-reduce-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={}, to_apply=sum
  ar1 = f32[8] all-reduce(b), replica_groups={}, to_apply=sum
  s = f32[8] add(ar0, ar1)
  ROOT t = (f32[8], f32[8]) tuple(s, ar0)
}
)"))
                   .changed);
  // Subtract is not a reduction.
  EXPECT_FALSE(RunPass("all-reduce-reassociate", CollectiveModule(R"(
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  ar0 = f32[8] all-reduce(a), replica_groups={}, to_apply=sum
  ar1 = f32[8] all-reduce(b), replica_groups={}, to_apply=sum
  ROOT s = f32[8] subtract(ar0, ar1)
}
)"))
                   .changed);
}

TEST(AllReduceReassociateTest, ConvertedAllReducesStay) {
  PassRun run = RunPass("all-reduce-reassociate", R"(HloModule m
sum16 {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}

ENTRY main {
  a = bf16[8] parameter(0)
  b = bf16[8] parameter(1)
  ar0 = bf16[8] all-reduce(a), replica_groups={}, to_apply=sum16
  ar1 = bf16[8] all-reduce(b), replica_groups={}, to_apply=sum16
  c0 = f32[8] convert(ar0)
  c1 = f32[8] convert(ar1)
  ROOT s = f32[8] add(c0, c1)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
