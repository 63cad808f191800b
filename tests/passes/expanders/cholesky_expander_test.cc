// cholesky_expander: cholesky as a call of the blocked algorithm.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// A symmetric positive definite matrix x x^T + n I from a random x.
std::string SpdModule(int64_t n, bool lower, std::string_view batch = "") {
  const std::string b = std::string(batch);
  const std::string prefix = b.empty() ? "" : b + ",";
  const std::string dims = prefix + std::to_string(n) + "," + std::to_string(n);
  const int64_t rank = b.empty() ? 2 : 3;
  const std::string batch_dims = rank == 3 ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "";
  const std::string contract = std::to_string(rank - 1);
  return "HloModule m\nENTRY main {\n  x = f32[" + dims + "] parameter(0)\n" + "  xx = f32[" +
         dims + "] dot(x, x), " + batch_dims + "lhs_contracting_dims={" + contract +
         "}, rhs_contracting_dims={" + contract + "}\n" + "  r = s32[" + dims +
         "] iota(), iota_dimension=" + std::to_string(rank - 2) + "\n" + "  c = s32[" + dims +
         "] iota(), iota_dimension=" + std::to_string(rank - 1) + "\n" + "  eq = pred[" + dims +
         "] compare(r, c), direction=EQ\n" + "  eye = f32[" + dims + "] convert(eq)\n" +
         "  k = f32[] constant(" + std::to_string(n) + ")\n" + "  kb = f32[" + dims +
         "] broadcast(k), dimensions={}\n" + "  diag = f32[" + dims + "] multiply(eye, kb)\n" +
         "  a = f32[" + dims + "] add(xx, diag)\n" + "  ROOT l = f32[" + dims +
         "] cholesky(a), lower=" + (lower ? "true" : "false") + "\n}\n";
}

TEST(CholeskyExpanderTest, LowerSingleBlockIsALoopOverColumns) {
  PassRun run = RunPass("cholesky_expander", SpdModule(4, true));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_body
CHECK: iota()
CHECK: dot(
CHECK: dynamic-slice(
CHECK: sqrt(
CHECK: %xla.cholesky_f32_4_4__lower
CHECK: while(
CHECK: dynamic-update-slice(
CHECK: ROOT {{.*}} select(
CHECK: ENTRY
CHECK: ROOT %{{.*}} = f32[4,4] call(f32[4,4] %a), to_apply=%xla.cholesky_f32_4_4__lower
CHECK-NOT: cholesky(
)");
  ExpectSameSemantics(run);
}

TEST(CholeskyExpanderTest, BatchedUpperTransposes) {
  PassRun run = RunPass("cholesky_expander", SpdModule(3, false, "2"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.cholesky_f32_2_3_3__upper
CHECK: transpose({{.*}}), dimensions={0,2,1}
CHECK: ROOT {{.*}} transpose(
)");
  ExpectSameSemantics(run);
}

TEST(CholeskyExpanderTest, TwoBlocksSolveThePanel) {
  PassRun run = RunPass("cholesky_expander", SpdModule(130, true));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.cholesky_f32_130_130__lower
CHECK: f32[130,128] slice(
CHECK: triangular-solve({{.*}}), lower=true, transpose_a=ADJOINT
CHECK: f32[2,2] subtract(
CHECK: f32[130,130] dynamic-update-slice({{.*}}, f32[2,2] %get-tuple-element
)");
  ExpectSameSemantics(run, /*trials=*/1);
}

TEST(CholeskyExpanderTest, SharesOneComputationPerShape) {
  PassRun run = RunPass("cholesky_expander", R"(HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  l1 = f32[2,2] cholesky(a), lower=true
  l2 = f32[2,2] cholesky(l1), lower=true
  ROOT t = (f32[2,2], f32[2,2]) tuple(l1, l2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: call(f32[2,2] %a), to_apply=%xla.cholesky_f32_2_2__lower
CHECK: call({{.*}}), to_apply=%xla.cholesky_f32_2_2__lower
)");
}

TEST(CholeskyExpanderTest, NoCholeskyNoChange) {
  PassRun run = RunPass("cholesky_expander", R"(HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  ROOT n = f32[2,2] negate(a)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
