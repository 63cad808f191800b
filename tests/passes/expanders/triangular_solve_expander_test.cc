// triangular_solve_expander: triangular-solve as a call of the blocked (or
// direct) solve.
#include "passes/expanders/triangular_solve_expander.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/control_flow_test_util.h"
#include "passes/registry.h"

namespace hlogym::testing {
namespace {

struct Solve {
  std::vector<int64_t> batch;
  int64_t n = 4;
  int64_t m = 3;  // the other dimension of b
  bool left_side = true;
  bool lower = true;
  std::string transpose = "NO_TRANSPOSE";
  bool unit_diagonal = false;
  std::string type = "f32";
};

std::string Dims(const std::vector<int64_t>& batch, int64_t rows, int64_t cols) {
  std::vector<int64_t> dims = batch;
  dims.push_back(rows);
  dims.push_back(cols);
  return absl::StrJoin(dims, ",");
}

// A module solving with a well-conditioned a = p / n + 2 I from a random p
// (for a unit diagonal only p / n off the diagonal is read).
std::string SolveModule(const Solve& s) {
  const std::string t = s.type;
  const std::string a = t + "[" + Dims(s.batch, s.n, s.n) + "]";
  const std::string b =
      t + "[" + (s.left_side ? Dims(s.batch, s.n, s.m) : Dims(s.batch, s.m, s.n)) + "]";
  const std::string pa = "s32[" + Dims(s.batch, s.n, s.n) + "]";
  const int64_t rank = static_cast<int64_t>(s.batch.size()) + 2;
  return absl::StrCat(
      "HloModule m\nENTRY main {\n", "  p = ", a, " parameter(0)\n", "  b = ", b, " parameter(1)\n",
      "  inv = ", t, "[] constant(", 1.0 / static_cast<double>(s.n), ")\n", "  invb = ", a,
      " broadcast(inv), dimensions={}\n", "  ps = ", a, " multiply(p, invb)\n", "  r = ", pa,
      " iota(), iota_dimension=", rank - 2, "\n", "  c = ", pa,
      " iota(), iota_dimension=", rank - 1, "\n", "  eq = pred[", Dims(s.batch, s.n, s.n),
      "] compare(r, c), direction=EQ\n", "  eye = ", a, " convert(eq)\n", "  two = ", t,
      "[] constant(2)\n", "  twob = ", a, " broadcast(two), dimensions={}\n", "  d = ", a,
      " multiply(eye, twob)\n", "  a = ", a, " add(ps, d)\n", "  ROOT x = ", b,
      " triangular-solve(a, b), left_side=", s.left_side ? "true" : "false",
      ", lower=", s.lower ? "true" : "false",
      ", unit_diagonal=", s.unit_diagonal ? "true" : "false", ", transpose_a=", s.transpose,
      "\n}\n");
}

// RunPass for a pass built with a non-default block size / direct-solve
// choice: the same verification and changed-exactly-when-changed check.
PassRun RunExpander(std::string_view hlo, int64_t block_size, bool direct = true) {
  TriangularSolveExpander pass(block_size, direct);
  return RunPass(pass, hlo);
}

std::string Describe(const Solve& s) {
  return absl::StrCat("batch=[", absl::StrJoin(s.batch, ","), "] n=", s.n, " m=", s.m,
                      s.left_side ? " left" : " right", s.lower ? " lower " : " upper ",
                      s.transpose, s.unit_diagonal ? " unit " : " nonunit ", s.type);
}

// Every combination of side, triangle, transpose and unit diagonal.
std::vector<Solve> AllCombinations(Solve base) {
  std::vector<Solve> result;
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          Solve s = base;
          s.left_side = left;
          s.lower = lower;
          s.transpose = transpose;
          s.unit_diagonal = unit;
          result.push_back(s);
        }
      }
    }
  }
  return result;
}

void ExpectExpandedAndEquivalent(const Solve& s, int64_t block_size, bool direct = true) {
  SCOPED_TRACE(Describe(s) + " block=" + std::to_string(block_size));
  PassRun run = RunExpander(SolveModule(s), block_size, direct);
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("triangular-solve("), std::string::npos) << run.after;
  ExpectSameSemantics(run, /*trials=*/2);
}

TEST(TriangularSolveExpanderTest, SingleBlockInvertsWithALoopOverRows) {
  PassRun run = RunPass("triangular_solve_expander", SolveModule({}));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_body
CHECK: dynamic-slice(
CHECK: dot({{.*}}), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,highest}
CHECK: negate(
CHECK: dynamic-update-slice(
CHECK: %xla.triangular_solve_f32_4_4__f32_4_3__left_lower_NO_TRANSPOSE_nonunit
CHECK: %a{{[.0-9]*}} = f32[4,4] parameter(0)
CHECK: select(
CHECK: f32[1,4] reduce(
CHECK: divide(
CHECK: while(
CHECK: %b{{[.0-9]*}} = f32[4,3] parameter(1)
CHECK: ROOT {{.*}} = f32[4,3] dot(
CHECK: ENTRY
CHECK: ROOT %{{.*}} = f32[4,3] call(f32[4,4] %a, f32[4,3] %b), to_apply=%xla.triangular_solve_f32_4_4__f32_4_3__left_lower_NO_TRANSPOSE_nonunit
CHECK-NOT: triangular-solve(
)");
  ExpectSameSemantics(run);
}

TEST(TriangularSolveExpanderTest, SeveralBlocksPadTheLastAndConcatenate) {
  Solve s;
  s.n = 10;
  s.left_side = false;
  s.lower = false;
  s.transpose = "TRANSPOSE";
  PassRun run = RunExpander(SolveModule(s), /*block_size=*/4);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.triangular_solve_f32_10_10__f32_3_10__right_upper_TRANSPOSE_nonunit
CHECK: f32[4,4] slice({{.*}}), slice={[0:4], [0:4]}
CHECK: f32[4,4] slice({{.*}}), slice={[4:8], [4:8]}
CHECK: f32[2,2] slice({{.*}}), slice={[8:10], [8:10]}
CHECK: f32[4,2] pad(f32[2,2] %slice.2, {{.*}}), padding=0_2x0_0
CHECK: f32[4,2] pad(f32[2,2] %convert, {{.*}}), padding=2_0x0_0
CHECK: f32[4,4] concatenate(f32[4,2] %pad, f32[4,2] %broadcast{{.*}}), dimensions={1}
CHECK: f32[3,4,4] concatenate(
CHECK: (s32[], f32[3,4,4], f32[3,4,4]) while(
CHECK: f32[3,10] concatenate(
)");
  ExpectSameSemantics(run);
}

// The expansion in the forms of XLA's builder library (the masks' vector iotas, u32 identities,
// the diagonal summed out of the masked blocks, one block broadcast and transposed, the inverse's
// loop counting from 1): the default pipeline then ends at the pinned XLA's op count on every
// side, triangle, transposition and diagonal kind, and above the block size (read from XLA's
// pass dumps; hlogym's earlier forms ended 1 to 6 instructions off).
TEST(TriangularSolveExpanderTest, DefaultPipelineEndsAtXla) {
  const struct {
    int64_t n;
    const char* attributes;
    int64_t xla_op_count;
  } cases[] = {
      {6, "left_side=true, lower=true, transpose_a=NO_TRANSPOSE", 64},
      {6, "left_side=true, lower=false, transpose_a=TRANSPOSE", 71},
      {200, "left_side=true, lower=true, transpose_a=NO_TRANSPOSE", 84},
      {6, "left_side=false, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE", 72},
      {6, "left_side=true, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE", 75},
  };
  absl::StatusOr<std::unique_ptr<Pass>> pipeline = CreatePipeline("xla-cpu-default");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.attributes);
    const bool left = absl::StrContains(c.attributes, "left_side=true");
    const std::string b =
        left ? absl::StrCat("f32[", c.n, ",3]") : absl::StrCat("f32[3,", c.n, "]");
    const std::string module = absl::StrCat(
        "HloModule m\nENTRY main {\n  a = f32[", c.n, ",", c.n, "] parameter(0)\n  b = ", b,
        " parameter(1)\n  ROOT x = ", b, " triangular-solve(a, b), ", c.attributes, "\n}\n");
    PassRun run = RunPass(**pipeline, module);
    EXPECT_EQ(run.module->instruction_count(), c.xla_op_count);
  }
}

TEST(TriangularSolveExpanderTest, SmallBatchedMatricesAreSolvedDirectly) {
  Solve s;
  s.batch = {9};
  s.n = 4;
  PassRun run = RunPass("triangular_solve_expander", SolveModule(s));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: while
CHECK: %xla.triangular_solve_f32_9_4_4__f32_9_4_3__left_lower_NO_TRANSPOSE_nonunit
CHECK: f32[9,1,3] slice(
CHECK: divide(
CHECK: f32[9,4,3] dynamic-update-slice(
CHECK: f32[9,1,3] dot(
CHECK: ENTRY
)");
  ExpectSameSemantics(run);
}

TEST(TriangularSolveExpanderTest, OneByOneDividesOrReturnsB) {
  Solve s;
  s.n = 1;
  PassRun run = RunPass("triangular_solve_expander", SolveModule(s));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.triangular_solve_f32_1_1__f32_1_3__left_lower_NO_TRANSPOSE_nonunit
CHECK: ROOT {{.*}} = f32[1,3] divide(
)");
  ExpectSameSemantics(run);
  s.unit_diagonal = true;
  PassRun unit = RunPass("triangular_solve_expander", SolveModule(s));
  EXPECT_TRUE(unit.changed);
  EXPECT_CHECKS(unit.after, R"(
CHECK: %xla.triangular_solve_f32_1_1__f32_1_3__left_lower_NO_TRANSPOSE_unit
CHECK: ROOT %b{{[.0-9]*}} = f32[1,3] parameter(1)
)");
  ExpectSameSemantics(unit);
}

TEST(TriangularSolveExpanderTest, EmptyBIsReturned) {
  PassRun run = RunPass("triangular_solve_expander", R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  b = f32[3,0] parameter(1)
  ROOT x = f32[3,0] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT %b{{[.0-9]*}} = f32[3,0] parameter(1)
CHECK: ENTRY
CHECK: call(
)");
}

TEST(TriangularSolveExpanderTest, EveryCombinationInOneBlock) {
  Solve base;
  base.n = 6;
  for (const Solve& s : AllCombinations(base)) ExpectExpandedAndEquivalent(s, 128);
}

TEST(TriangularSolveExpanderTest, EveryCombinationOverSeveralBlocks) {
  Solve base;
  base.n = 10;
  for (const Solve& s : AllCombinations(base)) ExpectExpandedAndEquivalent(s, 4);
}

TEST(TriangularSolveExpanderTest, EveryCombinationSolvedDirectly) {
  Solve base;
  base.batch = {9};
  base.n = 5;
  base.m = 2;
  for (const Solve& s : AllCombinations(base)) ExpectExpandedAndEquivalent(s, 128);
}

TEST(TriangularSolveExpanderTest, EveryCombinationBatchedBlocked) {
  Solve base;
  base.batch = {2, 3};
  base.n = 5;
  base.m = 2;
  for (const Solve& s : AllCombinations(base)) {
    ExpectExpandedAndEquivalent(s, 2, /*direct=*/false);
  }
}

TEST(TriangularSolveExpanderTest, LargerThanOneDefaultBlock) {
  for (bool left : {true, false}) {
    Solve s;
    s.n = 130;
    s.m = 2;
    s.left_side = left;
    s.lower = left;
    s.transpose = left ? "NO_TRANSPOSE" : "ADJOINT";
    SCOPED_TRACE(Describe(s));
    PassRun run = RunPass("triangular_solve_expander", SolveModule(s));
    EXPECT_TRUE(run.changed);
    EXPECT_CHECKS(run.after, R"(
CHECK: f32[128,128] slice({{.*}}), slice={[0:128], [0:128]}
CHECK: f32[2,2] slice({{.*}}), slice={[128:130], [128:130]}
CHECK: f32[2,128,128] concatenate(
CHECK: (s32[], f32[2,128,128], f32[2,128,128]) while(
)");
    ExpectSameSemantics(run, /*trials=*/1);
  }
}

TEST(TriangularSolveExpanderTest, OtherFloatTypes) {
  for (const char* type : {"f64", "bf16", "f16"}) {
    Solve s;
    s.type = type;
    s.n = 5;
    s.left_side = false;
    s.transpose = "TRANSPOSE";
    ExpectExpandedAndEquivalent(s, 2);
    s.batch = {10};
    ExpectExpandedAndEquivalent(s, 128);
  }
}

TEST(TriangularSolveExpanderTest, KeepsLayouts) {
  PassRun run = RunPass("triangular_solve_expander", R"(HloModule m
ENTRY main {
  a = f32[2,3,3]{2,1,0} parameter(0)
  b = f32[2,3,4]{2,1,0} parameter(1)
  ROOT x = f32[2,3,4]{2,1,0} triangular-solve(a, b), left_side=true, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.triangular_solve_f32_2_3_3__f32_2_3_4__left_upper_NO_TRANSPOSE_unit
CHECK: f32[2,3,3]{2,1,0} select(
CHECK: ENTRY
CHECK: f32[2,3,4]{2,1,0} call(
)");
}

TEST(TriangularSolveExpanderTest, SharesOneComputationPerSignature) {
  PassRun run = RunPass("triangular_solve_expander", R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  b = f32[3,2] parameter(1)
  x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  y = f32[3,2] triangular-solve(a, x), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  z = f32[3,2] triangular-solve(a, y), left_side=true, lower=false, transpose_a=NO_TRANSPOSE
  ROOT t = (f32[3,2], f32[3,2], f32[3,2]) tuple(x, y, z)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: call(f32[3,3] %a, f32[3,2] %b), to_apply=%xla.triangular_solve_f32_3_3__f32_3_2__left_lower_NO_TRANSPOSE_nonunit
CHECK: call({{.*}}), to_apply=%xla.triangular_solve_f32_3_3__f32_3_2__left_lower_NO_TRANSPOSE_nonunit
CHECK: call({{.*}}), to_apply=%xla.triangular_solve_f32_3_3__f32_3_2__left_upper_NO_TRANSPOSE_nonunit
)");
}

TEST(TriangularSolveExpanderTest, NoTriangularSolveNoChange) {
  PassRun run = RunPass("triangular_solve_expander", R"(HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  ROOT n = f32[2,2] negate(a)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(TriangularSolveExpanderTest, ComplexIsLeftAlone) {
  PassRun run = RunPass("triangular_solve_expander", R"(HloModule m
ENTRY main {
  a = c64[3,3] parameter(0)
  b = c64[3,2] parameter(1)
  ROOT x = c64[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=ADJOINT
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(TriangularSolveExpanderTest, MalformedSolveIsAnErrorNamingIt) {
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT bad_solve = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}
)",
                            "test.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  Instruction* root = (*module)->entry_computation()->root_instruction();
  root->mutable_attrs().left_side = false;  // b's columns no longer match a
  TriangularSolveExpander pass;
  auto changed = pass.Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad_solve"), std::string::npos) << changed.status();
}

TEST(TriangularSolveExpanderTest, CholeskyThenExpanderLeavesNoSolve) {
  const int64_t n = 130;
  const std::string dims = absl::StrCat(n, ",", n);
  const std::string hlo = absl::StrCat(
      "HloModule m\nENTRY main {\n  x = f32[", dims, "] parameter(0)\n", "  xx = f32[", dims,
      "] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n", "  r = s32[", dims,
      "] iota(), iota_dimension=0\n", "  c = s32[", dims, "] iota(), iota_dimension=1\n",
      "  eq = pred[", dims, "] compare(r, c), direction=EQ\n", "  eye = f32[", dims,
      "] convert(eq)\n", "  k = f32[] constant(", n, ")\n", "  kb = f32[", dims,
      "] broadcast(k), dimensions={}\n", "  diag = f32[", dims, "] multiply(eye, kb)\n",
      "  a = f32[", dims, "] add(xx, diag)\n", "  ROOT l = f32[", dims,
      "] cholesky(a), lower=true\n}\n");
  PassRun cholesky = RunPass("cholesky_expander", hlo);
  ASSERT_TRUE(cholesky.changed);
  ASSERT_NE(cholesky.after.find("triangular-solve("), std::string::npos);
  PassRun run = RunPass("triangular_solve_expander", cholesky.after);
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find("triangular-solve("), std::string::npos) << run.after;
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.triangular_solve_f32_128_128__f32_2_128__right_lower_ADJOINT_nonunit
CHECK: %xla.cholesky_f32_130_130__lower
CHECK: call({{.*}}), to_apply=%xla.triangular_solve_f32_128_128__f32_2_128__right_lower_ADJOINT_nonunit
)");
  // Against the original cholesky.
  run.before = cholesky.before;
  ExpectSameSemantics(run, /*trials=*/1);
}

}  // namespace
}  // namespace hlogym::testing
