// dot_decomposer: non-canonical dots rewritten to [batch, M, K] x [batch, K, N].
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(DotDecomposerTest, MergesContractingAndNonContractingDims) {
  PassRun run = RunPass("dot_decomposer", R"(HloModule m
ENTRY main {
  a = f32[2,3,4,5] parameter(0)
  b = f32[4,5,6] parameter(1)
  ROOT d = f32[2,3,6] dot(a, b), lhs_contracting_dims={2,3}, rhs_contracting_dims={0,1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3,4,5] transpose(f32[2,3,4,5] %a), dimensions={0,1,2,3}
CHECK: f32[6,20] reshape(
CHECK: f32[4,5,6] transpose(f32[4,5,6] %b), dimensions={0,1,2}
CHECK: f32[20,6] reshape(
CHECK: f32[6,6] dot({{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: ROOT {{.*}} = f32[2,3,6] reshape()");
}

TEST(DotDecomposerTest, MovesBatchDimsFirst) {
  PassRun run = RunPass("dot_decomposer", R"(HloModule m
ENTRY main {
  a = f32[3,7,2] parameter(0)
  b = f32[7,2,4] parameter(1)
  ROOT d = f32[7,3,4] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[7,3,2] transpose(f32[3,7,2] %a), dimensions={1,0,2}
CHECK: f32[7,2,4] transpose(f32[7,2,4] %b), dimensions={0,1,2}
CHECK: f32[7,3,4] dot({{.*}}), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
CHECK: ROOT {{.*}} = f32[7,3,4] reshape()");
}

TEST(DotDecomposerTest, OuterProductGetsUnitContractingDim) {
  PassRun run = RunPass("dot_decomposer", R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[3,1] reshape(
CHECK: f32[1,4] reshape(
CHECK: f32[3,4] dot({{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0})");
}

TEST(DotDecomposerTest, KeepsCanonicalDots) {
  PassRun run = RunPass("dot_decomposer", R"(HloModule m
ENTRY main {
  a = f32[5,3,2] parameter(0)
  b = f32[5,2,4] parameter(1)
  v = f32[2] parameter(2)
  m = f32[4,2] parameter(3)
  d1 = f32[5,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  d2 = f32[4] dot(m, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[5,3,4], f32[4]) tuple(d1, d2)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
