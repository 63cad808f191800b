// batch-dot-simplification: size-1 batch dimensions removed from dots.
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"

namespace hlogym::testing {
namespace {

TEST(BatchDotSimplificationTest, ElidesDegenerateBatchDims) {
  PassRun run = RunPass("batch-dot-simplification", R"(HloModule m
ENTRY main {
  a = f32[1,4,3,2] parameter(0)
  b = f32[1,4,2,5] parameter(1)
  ROOT d = f32[1,4,3,5] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[4,3,2] reshape(f32[1,4,3,2] %a)
CHECK: f32[4,2,5] reshape(f32[1,4,2,5] %b)
CHECK: f32[4,3,5] dot({{.*}}), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
CHECK: ROOT {{.*}} = f32[1,4,3,5] reshape()");
}

TEST(BatchDotSimplificationTest, KeepsDotsWithoutDegenerateCanonicalBatch) {
  PassRun run = RunPass("batch-dot-simplification", R"(HloModule m
ENTRY main {
  a = f32[4,3,2] parameter(0)
  b = f32[4,2,5] parameter(1)
  c = f32[3,1,2] parameter(2)
  e = f32[2,1,5] parameter(3)
  d1 = f32[4,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  d2 = f32[1,3,5] dot(c, e), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,3,5], f32[1,3,5]) tuple(d1, d2)
}
)");
  EXPECT_FALSE(run.changed);
}

// A bitcast reads the dot's memory in its layout: the reshape that replaces the dot keeps that
// layout, as XLA's does, so the bitcast reads the same values.
TEST(BatchDotSimplificationTest, ReplacementKeepsTheDotsLayout) {
  constexpr char kHlo[] = R"(HloModule m
ENTRY main {
  a = f32[1,2,3]{2,1,0} parameter(0)
  b = f32[1,3,4]{2,1,0} parameter(1)
  d = f32[1,2,4]{1,2,0} dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT c = f32[8]{0} bitcast(d)
}
)";
  PassRun run = RunPass("batch-dot-simplification", kHlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,4]{{.*}} dot(
CHECK: f32[1,2,4]{1,2,0} reshape(
CHECK: ROOT {{.*}} bitcast()");
  ExpectSameSemantics(run);
}

// An operand in a transposed layout (a transpose JAX lays out as a bitcast)
// keeps its memory order through the reshape that drops the batch dim, as
// XLA's does: the reshape stays a bitcast, and gemv-rewriter, which wants
// descending layouts, later leaves the dot alone.
TEST(BatchDotSimplificationTest, OperandReshapesKeepTheOperandsMemoryOrder) {
  PassRun run = RunPass("batch-dot-simplification", R"(HloModule m
ENTRY main {
  a = f32[1,3,3]{2,1,0} parameter(0)
  t = f32[1,3,3]{1,2,0} transpose(a), dimensions={0,2,1}
  v = f32[1,3]{1,0} parameter(1)
  ROOT d = f32[1,3]{1,0} dot(t, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[3,3]{0,1} reshape(f32[1,3,3]{1,2,0} %t)
CHECK: f32[3]{0} reshape(f32[1,3]{1,0} %v)
CHECK: f32[3]{0} dot()");
  ExpectSameSemantics(run);
}

}  // namespace
}  // namespace hlogym::testing
