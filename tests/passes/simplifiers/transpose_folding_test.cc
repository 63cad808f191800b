// transpose-folding: transposes folded into dot dimension numbers.
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(TransposeFoldingTest, FoldsBothOperandsOfMatmul) {
  PassRun run = RunPass("transpose-folding", R"(HloModule m
ENTRY main {
  a = f32[3,2] parameter(0)
  b = f32[4,3] parameter(1)
  ta = f32[2,3] transpose(a), dimensions={1,0}
  tb = f32[3,4] transpose(b), dimensions={1,0}
  ROOT d = f32[2,4] dot(ta, tb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK-NOT: transpose(
CHECK: ROOT {{.*}} = f32[2,4] dot(f32[3,2] %a, f32[4,3] %b), lhs_contracting_dims={0}, rhs_contracting_dims={1})");
}

TEST(TransposeFoldingTest, FoldsBatchedOperandKeepingBatchDims) {
  PassRun run = RunPass("transpose-folding", R"(HloModule m
ENTRY main {
  a = f32[5,3,2] parameter(0)
  b = f32[5,3,4] parameter(1)
  ta = f32[5,2,3] transpose(a), dimensions={0,2,1}
  ROOT d = f32[5,2,4] dot(ta, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(
      run.after,
      R"(CHECK: ROOT {{.*}} = f32[5,2,4] dot(f32[5,3,2] %a, f32[5,3,4] %b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1})");
}

TEST(TransposeFoldingTest, KeepsTransposesItCannotFold) {
  PassRun run = RunPass("transpose-folding", R"(HloModule m
ENTRY main {
  a = f32[5,3,2] parameter(0)
  b = f32[3,5,4] parameter(1)
  v = f32[2] parameter(2)
  m = f32[2,3] parameter(3)
  ta = f32[3,5,2] transpose(a), dimensions={1,0,2}
  d1 = f32[5,2,4] dot(ta, b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={1}, rhs_contracting_dims={0}
  tm = f32[3,2] transpose(m), dimensions={1,0}
  d2 = f32[3] dot(tm, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[5,2,4], f32[3]) tuple(d1, d2)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
