// gemv-rewriter: matrix-vector dots become matrix-matrix dots.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(GemvRewriterTest, MatrixTimesVector) {
  PassRun run = RunPass("gemv-rewriter", R"(HloModule m
ENTRY main {
  a = f32[8,16]{1,0} parameter(0)
  v = f32[16]{0} parameter(1)
  ROOT d = f32[8]{0} dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[16,1]{1,0} reshape(f32[16]{0} %v)
CHECK: f32[8,1]{1,0} dot(f32[8,16]{1,0} %a, {{.*}}), lhs_contracting_dims={1}, rhs_contracting_dims={0}
CHECK: ROOT {{.*}} f32[8]{0} reshape(
)");
  ExpectSameSemantics(run);
}

TEST(GemvRewriterTest, BatchedVectorTimesMatrix) {
  PassRun run = RunPass("gemv-rewriter", R"(HloModule m
ENTRY main {
  v = f32[2,16]{1,0} parameter(0)
  b = f32[2,16,4]{2,1,0} parameter(1)
  ROOT d = f32[2,4]{1,0} dot(v, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,16,1]{2,1,0} reshape(f32[2,16]{1,0} %v)
CHECK: f32[2,1,4]{2,1,0} dot(
CHECK: ROOT {{.*}} f32[2,4]{1,0} reshape(
)");
  ExpectSameSemantics(run);
}

TEST(GemvRewriterTest, MatrixMatrixAndVectorVectorNoChange) {
  for (const char* hlo : {R"(HloModule m
ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16,4] parameter(1)
  ROOT d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                          R"(HloModule m
ENTRY main {
  a = f32[16] parameter(0)
  b = f32[16] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)"}) {
    EXPECT_FALSE(RunPass("gemv-rewriter", hlo).changed) << hlo;
  }
}

}  // namespace
}  // namespace hlogym::testing
