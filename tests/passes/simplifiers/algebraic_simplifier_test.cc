// algsimp: one HLO-in / CHECK-out test per rewrite, negative tests where XLA
// must not fire, and the smoke corpus (verifies, op count, equivalence).
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "analysis/verifier.h"
#include "eval/equivalence.h"
#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"
#include "text/file_io.h"

namespace hlogym::testing {
namespace {

// Runs algsimp; expects a change and the CHECK lines.
void ExpectSimplifies(std::string_view hlo, std::string_view checks) {
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_TRUE(run.changed) << run.after;
  EXPECT_CHECKS(run.after, checks);
}

// Runs algsimp; expects no change.
void ExpectUnchanged(std::string_view hlo) {
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_FALSE(run.changed) << run.after;
}

// A module computing `body` over parameters p (f32[4]) and q (f32[4]).
std::string F32(std::string_view body) {
  return "HloModule m\nENTRY main {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n" +
         std::string(body) + "}\n";
}
std::string S32(std::string_view body) {
  return "HloModule m\nENTRY main {\n  p = s32[4] parameter(0)\n  q = s32[4] parameter(1)\n" +
         std::string(body) + "}\n";
}

// ------------------------------- identities --------------------------------

TEST(AlgebraicSimplifierTest, NoChangeOnSimpleModule) {
  ExpectUnchanged(F32("  ROOT r = f32[4] add(p, q)\n"));
}

TEST(AlgebraicSimplifierTest, AddZero) {
  ExpectSimplifies(F32("  z = f32[] constant(0)\n  b = f32[4] broadcast(z), dimensions={}\n"
                       "  ROOT r = f32[4] add(b, p)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)\nCHECK-NOT: add");
}

// XLA tells zeros apart bit for bit: x + -0 is x for every x, yet XLA keeps it (the pinned
// XLA's dump of gymnax's Acrobot step, where jax.random.uniform adds a negated zero).
TEST(AlgebraicSimplifierTest, AddNegativeZeroStays) {
  ExpectUnchanged(
      F32("  z = f32[] constant(-0)\n  b = f32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = f32[4] add(p, b)\n"));
}

TEST(AlgebraicSimplifierTest, SubtractZeroAndSelf) {
  ExpectSimplifies(F32("  z = f32[] constant(0)\n  b = f32[4] broadcast(z), dimensions={}\n"
                       "  ROOT r = f32[4] subtract(p, b)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectSimplifies(S32("  ROOT r = s32[4] subtract(p, p)\n"),
                   "CHECK: s32[] constant(0)\nCHECK: ROOT {{.*}} broadcast(");
  // x - x is not 0 for floats (inf, NaN).
  ExpectUnchanged(F32("  ROOT r = f32[4] subtract(p, p)\n"));
}

TEST(AlgebraicSimplifierTest, SubtractConstantBecomesAddOfNegation) {
  ExpectSimplifies(F32("  c = f32[] constant(2)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] subtract(p, b)\n"),
                   "CHECK: negate(f32[] %c)\nCHECK: broadcast(\nCHECK: ROOT {{.*}} add(f32[4] %p");
}

TEST(AlgebraicSimplifierTest, IntegerSubtractIdentities) {
  ExpectSimplifies(S32("  d = s32[4] subtract(p, q)\n  ROOT r = s32[4] subtract(p, d)\n"),
                   "CHECK: ROOT %q = s32[4] parameter(1)");
  ExpectSimplifies(S32("  a = s32[4] add(q, p)\n  ROOT r = s32[4] subtract(p, a)\n"),
                   "CHECK: ROOT {{.*}} negate(s32[4] %q)");
  ExpectSimplifies(S32("  a = s32[4] add(q, p)\n  ROOT r = s32[4] subtract(a, p)\n"),
                   "CHECK: ROOT %q = s32[4] parameter(1)");
  ExpectUnchanged(F32("  d = f32[4] subtract(p, q)\n  ROOT r = f32[4] subtract(p, d)\n"));
}

TEST(AlgebraicSimplifierTest, MultiplyByOne) {
  ExpectSimplifies(F32("  c = f32[] constant(1)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] multiply(p, b)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
}

TEST(AlgebraicSimplifierTest, MultiplyByZeroOnlyForIntegers) {
  ExpectSimplifies(S32("  c = s32[] constant(0)\n  b = s32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = s32[4] multiply(p, b)\n"),
                   "CHECK: ROOT %b = s32[4] broadcast(");
  // 0 * NaN is NaN: no rewrite for floats.
  ExpectUnchanged(
      F32("  c = f32[] constant(0)\n  b = f32[4] broadcast(c), dimensions={}\n"
          "  ROOT r = f32[4] multiply(p, b)\n"));
}

TEST(AlgebraicSimplifierTest, MultiplyNegations) {
  ExpectSimplifies(F32("  a = f32[4] negate(p)\n  b = f32[4] negate(q)\n"
                       "  ROOT r = f32[4] multiply(a, b)\n"),
                   "CHECK-NOT: negate\nCHECK: ROOT {{.*}} multiply(f32[4] %p, f32[4] %q)");
}

TEST(AlgebraicSimplifierTest, MultiplyByConvertedPredIsSelect) {
  ExpectSimplifies(
      F32("  c = pred[4] compare(p, q), direction=GT\n  f = f32[4] convert(c)\n"
          "  ROOT r = f32[4] multiply(q, f)\n"),
      "CHECK: f32[] constant(0)\nCHECK: ROOT {{.*}} select(pred[4] %c, f32[4] %q, f32[4] %");
}

TEST(AlgebraicSimplifierTest, MultiplyConstantReassociation) {
  ExpectSimplifies(F32("  c1 = f32[] constant(2)\n  b1 = f32[4] broadcast(c1), dimensions={}\n"
                       "  c2 = f32[] constant(3)\n  b2 = f32[4] broadcast(c2), dimensions={}\n"
                       "  m = f32[4] multiply(p, b1)\n  ROOT r = f32[4] multiply(m, b2)\n"),
                   "CHECK: multiply(f32[] %c1, f32[] %c2)\nCHECK: ROOT {{.*}} multiply(f32[4] %p");
}

TEST(AlgebraicSimplifierTest, SqrtTimesSqrtOfNonNegative) {
  ExpectSimplifies(F32("  e = f32[4] exponential(p)\n  s = f32[4] sqrt(e)\n"
                       "  ROOT r = f32[4] multiply(s, s)\n"),
                   "CHECK: ROOT %e = f32[4] exponential");
  ExpectUnchanged(F32("  s = f32[4] sqrt(p)\n  ROOT r = f32[4] multiply(s, s)\n"));
}

// exp(A) * exp(B) => exp(A + B), also when the exponentials have other users
// (the powers of a linear recurrence's decay, exp(-exp(nu)), in the
// generated training set's `lru` family).
TEST(AlgebraicSimplifierTest, ProductOfExponentialsIsTheExponentialOfTheSum) {
  ExpectSimplifies(F32("  a = f32[4] exponential(p)\n  b = f32[4] exponential(q)\n"
                       "  m = f32[4] multiply(a, b)\n  ROOT r = (f32[4], f32[4]) tuple(m, a)\n"),
                   "CHECK: add(f32[4] %p, f32[4] %q)\nCHECK: exponential(f32[4] %add");
}

TEST(AlgebraicSimplifierTest, AddCanonicalizesConstantsToTheRight) {
  ExpectSimplifies(F32("  c = f32[4] constant({1, 2, 3, 4})\n  ROOT r = f32[4] add(c, p)\n"),
                   "CHECK: ROOT {{.*}} add(f32[4] %p, f32[4] %c)");
}

TEST(AlgebraicSimplifierTest, AddConstantReassociation) {
  ExpectSimplifies(F32("  c1 = f32[] constant(2)\n  b1 = f32[4] broadcast(c1), dimensions={}\n"
                       "  c2 = f32[] constant(3)\n  b2 = f32[4] broadcast(c2), dimensions={}\n"
                       "  a = f32[4] add(p, b1)\n  ROOT r = f32[4] add(a, b2)\n"),
                   "CHECK: add(f32[] %c1, f32[] %c2)\nCHECK: ROOT {{.*}} add(f32[4] %p");
}

TEST(AlgebraicSimplifierTest, FactorsCommonMultiplierOnlyWhenExact) {
  ExpectSimplifies(S32("  c = s32[4] parameter(2)\n  a = s32[4] multiply(p, c)\n"
                       "  b = s32[4] multiply(q, c)\n  ROOT r = s32[4] add(a, b)\n"),
                   "CHECK: add(s32[4] %p, s32[4] %q)\nCHECK: ROOT {{.*}} multiply(");
  ExpectUnchanged(
      F32("  c = f32[4] parameter(2)\n  a = f32[4] multiply(p, c)\n"
          "  b = f32[4] multiply(q, c)\n  ROOT r = f32[4] add(a, b)\n"));
}

// scatter(A, i, u) + B => scatter(A + B, i, u) for a one-use scatter-add
// (the embedding gradient of a training step: a scatter into zeros plus the
// rest of the gradient); A + B then folds when A is zeros.
std::string ScatterPlus(std::string_view reducer_root, std::string_view extra_body,
                        std::string_view root) {
  return std::string(R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] )") +
         std::string(reducer_root) + R"(
}
ENTRY main {
  g = f32[4,8] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3,8] parameter(2)
  z = f32[] constant(0)
  zeros = f32[4,8] broadcast(z), dimensions={}
  s = f32[4,8] scatter(zeros, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
)" + std::string(extra_body) +
         "  ROOT r = f32[4,8] " + std::string(root) + "\n}\n";
}

TEST(AlgebraicSimplifierTest, AddOfScatterAddFoldsIntoTheScatterOperand) {
  for (const char* root : {"add(s, g)", "add(g, s)"}) {
    SCOPED_TRACE(root);
    std::string hlo = ScatterPlus("add(a, b)", "", root);
    PassRun run = RunPass("algsimp", hlo);
    EXPECT_TRUE(run.changed);
    EXPECT_CHECKS(run.after, R"(CHECK-NOT: broadcast(
CHECK-NOT: add(f32[4,8]
CHECK: ROOT {{.*}} = f32[4,8] scatter(f32[4,8] %g, s32[3,1] %idx, f32[3,8] %upd))");
    auto original = ParseModule(hlo, "before.hlo");
    ASSERT_TRUE(original.ok()) << original.status();
    auto result = CheckEquivalent(**original, *run.module);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->equivalent) << result->message;
  }
}

TEST(AlgebraicSimplifierTest, AddOfScatterKeptWhenNotAOneUseScatterAdd) {
  // The reducer multiplies instead of adding.
  ExpectUnchanged(ScatterPlus("multiply(a, b)", "", "add(s, g)"));
  // The scatter has another user.
  ExpectUnchanged(ScatterPlus("add(a, b)", "  m = f32[4,8] multiply(s, g)\n", "add(s, m)"));
  // Both operands are scatter-adds, but their updates (48 elements) outnumber
  // the result's (32): XLA leaves the pair as it is.
  ExpectUnchanged(ScatterPlus(
      "add(a, b)",
      "  t = f32[4,8] scatter(g, idx, upd), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum\n",
      "add(s, t)"));
}

// Two scatter-adds into a sum: one scatter of the sum of their operands, with
// the indices and updates concatenated where they differ in size (the two
// embedding gradients of a tied embedding, XLA's result on the corpus's T5
// training steps). Where one promises unique indices, the concatenation could
// break the promise: the scatters are chained instead.
std::string TwoScatterAdds(std::string_view rhs_flags) {
  return std::string(R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  g = f32[16,8] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2,8] parameter(2)
  j = s32[1,1] parameter(3)
  v = f32[1,8] parameter(4)
  z = f32[] constant(0)
  zeros = f32[16,8] broadcast(z), dimensions={}
  s = f32[16,8] scatter(zeros, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum
  t = f32[16,8] scatter(g, j, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1)") +
         std::string(rhs_flags) + R"(, to_apply=sum
  ROOT r = f32[16,8] add(s, t)
}
)";
}

TEST(AlgebraicSimplifierTest, SumOfTwoScatterAddsIsOneScatter) {
  PassRun merged = RunPass("algsimp", TwoScatterAdds(""));
  EXPECT_TRUE(merged.changed);
  EXPECT_CHECKS(merged.after, R"(
CHECK: s32[3,1] concatenate(s32[2,1] %i, s32[1,1] %j), dimensions={0}
CHECK: f32[3,8] concatenate(f32[2,8] %u, f32[1,8] %v), dimensions={0}
CHECK: ROOT {{.*}} = f32[16,8] scatter(f32[16,8] %g, s32[3,1] %concatenate, f32[3,8] %concatenate.1)
CHECK-NOT: scatter(
)");
  ExpectSameSemantics(merged, 5);

  PassRun chained = RunPass("algsimp", TwoScatterAdds(", unique_indices=true"));
  EXPECT_TRUE(chained.changed);
  EXPECT_CHECKS(chained.after, R"(
CHECK-NOT: concatenate(
CHECK: %t = f32[16,8] scatter(f32[16,8] %g, s32[1,1] %j, f32[1,8] %v)
CHECK: ROOT %s = f32[16,8] scatter(f32[16,8] %t, s32[2,1] %i, f32[2,8] %u)
)");
  ExpectSameSemantics(chained, 5);
}

TEST(AlgebraicSimplifierTest, DivideByOneAndByConstant) {
  ExpectSimplifies(F32("  c = f32[] constant(1)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] divide(p, b)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectSimplifies(F32("  c = f32[] constant(4)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] divide(p, b)\n"),
                   "CHECK: f32[] constant(0.25)\nCHECK: ROOT {{.*}} multiply(f32[4] %p");
}

// Softmax's exp / broadcast(sum): the reciprocal is taken on the small sum.
TEST(AlgebraicSimplifierTest, DivideByBroadcastIsMultiplyByBroadcastReciprocal) {
  const char* hlo = R"(HloModule m
ENTRY main {
  e = f32[2,3,4] parameter(0)
  s = f32[2,3] parameter(1)
  b = f32[2,3,4] broadcast(s), dimensions={0,1}
  ROOT r = f32[2,3,4] divide(e, b)
}
)";
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(CHECK: f32[2,3] divide(f32[2,3] %{{.*}}, f32[2,3] %s)
CHECK: f32[2,3,4] broadcast(f32[2,3] %{{.*}}), dimensions={0,1}
CHECK: ROOT {{.*}} = f32[2,3,4] multiply(f32[2,3,4] %e, f32[2,3,4] %{{.*}}))");
  auto original = ParseModule(hlo, "before.hlo");
  ASSERT_TRUE(original.ok()) << original.status();
  auto result = CheckEquivalent(**original, *run.module);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->equivalent) << result->message;
  // A broadcast shared by two divides (the pinned XLA's dump of this module):
  // the first divide visited takes the reciprocal, after which the sum has
  // two users and the second keeps its divide; a sum read elsewhere too keeps
  // both.
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  e = f32[2,3,4] parameter(0)
  f = f32[2,3,4] parameter(2)
  s = f32[2,3] parameter(1)
  b = f32[2,3,4] broadcast(s), dimensions={0,1}
  r = f32[2,3,4] divide(e, b)
  q = f32[2,3,4] divide(f, b)
  ROOT t = (f32[2,3,4], f32[2,3,4]) tuple(r, q)
}
)",
                   R"(CHECK: f32[2,3] divide(f32[2,3] %{{.*}}, f32[2,3] %s)
CHECK: multiply(f32[2,3,4] %e,
CHECK: %q = f32[2,3,4] divide(f32[2,3,4] %f, f32[2,3,4] %b))");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  e = f32[2,3,4] parameter(0)
  s = f32[2,3] parameter(1)
  b = f32[2,3,4] broadcast(s), dimensions={0,1}
  r = f32[2,3,4] divide(e, b)
  n = f32[2,3] negate(s)
  ROOT t = (f32[2,3,4], f32[2,3]) tuple(r, n)
}
)");
  // Integer division by a broadcast keeps its divide.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  e = s32[2,3,4] parameter(0)
  s = s32[2,3] parameter(1)
  b = s32[2,3,4] broadcast(s), dimensions={0,1}
  ROOT r = s32[2,3,4] divide(e, b)
}
)");
}

// The pinned XLA takes the reciprocal of a broadcast divisor before it reassociates divides, and
// not for complex types, where 1 / B would not keep Inf and NaN (its dumps of both: a divide by
// 2^k in jax.scipy.linalg.expm of a complex matrix keeps its divide).
TEST(AlgebraicSimplifierTest, DivideByABroadcastComesBeforeReassociationAndSkipsComplex) {
  PassRun run = RunPass("algsimp", R"(HloModule m
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[] parameter(2)
  d = f32[8] divide(a, b)
  bc = f32[8] broadcast(c), dimensions={}
  ROOT r = f32[8] divide(d, bc)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %d = f32[8] divide(f32[8] %a, f32[8] %b)
CHECK: f32[] divide(f32[] %{{.*}}, f32[] %c)
CHECK: ROOT {{.*}} = f32[8] multiply(f32[8] %d, f32[8] %{{.*}})
)");
  ExpectSameSemantics(run);
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  a = c64[8] parameter(0)
  c = c64[] parameter(1)
  bc = c64[8] broadcast(c), dimensions={}
  ROOT r = c64[8] divide(a, bc)
}
)");
}

TEST(AlgebraicSimplifierTest, DivideBySqrtIsRsqrt) {
  ExpectSimplifies(F32("  s = f32[4] sqrt(q)\n  ROOT r = f32[4] divide(p, s)\n"),
                   "CHECK: rsqrt(f32[4] %q)\nCHECK: ROOT {{.*}} multiply(f32[4] %p");
}

// The pinned XLA's rewrites through exponentials, each seen in its dumps of
// NumPyro's samplers (datasets/probes/probabilistic): A / exp(B) =>
// A * exp(-B), exp(A) / exp(B) => exp(A - B), log(exp(A)) => A,
// pow(exp(A), B) => exp(A * B).
TEST(AlgebraicSimplifierTest, RewritesThroughExponentials) {
  ExpectSimplifies(F32("  e = f32[4] exponential(q)\n  ROOT r = f32[4] divide(p, e)\n"),
                   "CHECK: negate(f32[4] %q)\nCHECK: exponential(f32[4] %negate\n"
                   "CHECK: ROOT {{.*}} multiply(f32[4] %p, f32[4] %exponential");
  ExpectSimplifies(F32("  a = f32[4] exponential(p)\n  b = f32[4] exponential(q)\n"
                       "  ROOT r = f32[4] divide(a, b)\n"),
                   "CHECK: subtract(f32[4] %p, f32[4] %q)\nCHECK: ROOT {{.*}} exponential(");
  ExpectSimplifies(F32("  e = f32[4] exponential(p)\n  ROOT r = f32[4] log(e)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectSimplifies(F32("  e = f32[4] exponential(p)\n  ROOT r = f32[4] power(e, q)\n"),
                   "CHECK: multiply(f32[4] %p, f32[4] %q)\nCHECK: ROOT {{.*}} exponential(");
}

TEST(AlgebraicSimplifierTest, DivideReassociation) {
  ExpectSimplifies(F32("  c = f32[4] parameter(2)\n  d = f32[4] divide(p, q)\n"
                       "  ROOT r = f32[4] divide(d, c)\n"),
                   "CHECK: multiply(f32[4] %q, f32[4] %c)\nCHECK: ROOT {{.*}} divide(f32[4] %p");
}

TEST(AlgebraicSimplifierTest, UnsignedDivideByPowerOfTwoIsShift) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = u32[4] parameter(0)
  c = u32[] constant(8)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] divide(p, b)
})",
                   "CHECK: u32[] constant(3)\nCHECK: ROOT {{.*}} shift-right-logical(u32[4] %p");
  // Integer division by a non-power of two stays.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  p = u32[4] parameter(0)
  c = u32[] constant(6)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] divide(p, b)
})");
}

TEST(AlgebraicSimplifierTest, RemainderByPowerOfTwoIsAnd) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = u32[4] parameter(0)
  c = u32[] constant(8)
  b = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] remainder(p, b)
})",
                   "CHECK: u32[] constant(7)\nCHECK: ROOT {{.*}} and(u32[4] %p");
}

TEST(AlgebraicSimplifierTest, UnaryInvolutions) {
  ExpectSimplifies(F32("  a = f32[4] negate(p)\n  ROOT r = f32[4] negate(a)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = pred[4] parameter(0)
  a = pred[4] not(p)
  ROOT r = pred[4] not(a)
})",
                   "CHECK: ROOT %p = pred[4] parameter(0)");
  ExpectSimplifies(F32("  e = f32[4] exponential(p)\n  ROOT r = f32[4] abs(e)\n"),
                   "CHECK: ROOT %e = f32[4] exponential");
  ExpectUnchanged(F32("  ROOT r = f32[4] abs(p)\n"));
}

TEST(AlgebraicSimplifierTest, LogicalIdentities) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = pred[4] parameter(0)
  t = pred[] constant(true)
  b = pred[4] broadcast(t), dimensions={}
  ROOT r = pred[4] and(p, b)
})",
                   "CHECK: ROOT %p = pred[4] parameter(0)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = pred[4] parameter(0)
  t = pred[] constant(true)
  b = pred[4] broadcast(t), dimensions={}
  ROOT r = pred[4] or(p, b)
})",
                   "CHECK: ROOT %b = pred[4] broadcast(");
}

// The pinned XLA's simplifier rewrites no xor: xor with zero (scalar or array,
// either side) and the xor of two identical adds stay, as its pass dumps of
// the rbg PRNG's Philox rounds and of this module show.
TEST(AlgebraicSimplifierTest, LeavesXorAlone) {
  ExpectUnchanged(
      S32("  z = s32[] constant(0)\n  b = s32[4] broadcast(z), dimensions={}\n"
          "  ROOT r = s32[4] xor(p, b)\n"));
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  p = u32[1] parameter(0)
  z = u32[1] constant({0})
  ROOT r = u32[1] xor(z, p)
})");
  ExpectUnchanged(
      S32("  s = s32[4] add(p, q)\n  t = s32[4] add(p, q)\n"
          "  ROOT r = s32[4] xor(s, t)\n"));
}

TEST(AlgebraicSimplifierTest, MaxMinIdentities) {
  ExpectSimplifies(F32("  ROOT r = f32[4] maximum(p, p)\n"), "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  c = f32[] constant(-inf)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] maximum(p, b)\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(
      S32("  c = s32[] constant(2147483647)\n"
          "  b = s32[4] broadcast(c), dimensions={}\n  ROOT r = s32[4] minimum(b, p)\n"),
      "CHECK: ROOT %p = s32[4] parameter");
  ExpectSimplifies(F32("  m = f32[4] maximum(p, q)\n  ROOT r = f32[4] maximum(m, q)\n"),
                   "CHECK: ROOT %m = f32[4] maximum(f32[4] %p, f32[4] %q)");
  // max with a finite constant stays.
  ExpectUnchanged(
      F32("  c = f32[] constant(0)\n  b = f32[4] broadcast(c), dimensions={}\n"
          "  ROOT r = f32[4] maximum(p, b)\n"));
}

TEST(AlgebraicSimplifierTest, MaxOfMinIsClamp) {
  ExpectSimplifies(F32("  lo = f32[] constant(-1)\n  bl = f32[4] broadcast(lo), dimensions={}\n"
                       "  hi = f32[] constant(1)\n  bh = f32[4] broadcast(hi), dimensions={}\n"
                       "  m = f32[4] minimum(p, bh)\n  ROOT r = f32[4] maximum(bl, m)\n"),
                   "CHECK: ROOT {{.*}} clamp(f32[4] %bl, f32[4] %p, f32[4] %bh)");
}

TEST(AlgebraicSimplifierTest, CompareRewrites) {
  ExpectSimplifies(S32("  ROOT r = pred[4] compare(p, p), direction=GE\n"),
                   "CHECK: pred[] constant(true)");
  ExpectUnchanged(F32("  ROOT r = pred[4] compare(p, p), direction=EQ\n"));
  ExpectSimplifies(F32("  e = f32[4] exponential(p)\n  z = f32[] constant(0)\n"
                       "  b = f32[4] broadcast(z), dimensions={}\n"
                       "  ROOT r = pred[4] compare(e, b), direction=LT\n"),
                   "CHECK: pred[] constant(false)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = u32[4] parameter(0)
  z = u32[] constant(0)
  b = u32[4] broadcast(z), dimensions={}
  ROOT r = pred[4] compare(p, b), direction=GE
})",
                   "CHECK: pred[] constant(true)");
}

TEST(AlgebraicSimplifierTest, SelectRewrites) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  ROOT r = f32[4] select(c, p, p)
})",
                   "CHECK: ROOT %p = f32[4] parameter(1)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = pred[] constant(false)
  b = pred[4] broadcast(t), dimensions={}
  ROOT r = f32[4] select(b, p, q)
})",
                   "CHECK: ROOT %q = f32[4] parameter(1)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] parameter(2)
  n = pred[4] not(c)
  ROOT r = f32[4] select(n, p, q)
})",
                   "CHECK: ROOT {{.*}} select(pred[4] %c, f32[4] %q, f32[4] %p)");
}

TEST(AlgebraicSimplifierTest, PowerRewrites) {
  ExpectSimplifies(F32("  c = f32[] constant(2)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] power(p, b)\n"),
                   "CHECK: ROOT {{.*}} multiply(f32[4] %p, f32[4] %p)");
  ExpectSimplifies(F32("  c = f32[] constant(1)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] power(p, b)\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectSimplifies(F32("  c = f32[] constant(-1)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] power(p, b)\n"),
                   "CHECK: ROOT {{.*}} divide(");
  // pow(x, 0.5) is sqrt only for x >= 0.
  ExpectUnchanged(
      F32("  c = f32[] constant(0.5)\n  b = f32[4] broadcast(c), dimensions={}\n"
          "  ROOT r = f32[4] power(p, b)\n"));
}

TEST(AlgebraicSimplifierTest, ExpOfZeroAndLogOfSqrt) {
  ExpectSimplifies(F32("  c = f32[] constant(0)\n  b = f32[4] broadcast(c), dimensions={}\n"
                       "  ROOT r = f32[4] exponential(b)\n"),
                   "CHECK: f32[] constant(1)\nCHECK-NOT: exponential");
  ExpectSimplifies(F32("  s = f32[4] sqrt(p)\n  ROOT r = f32[4] log(s)\n"),
                   "CHECK: log(f32[4] %p)\nCHECK: ROOT {{.*}} multiply(");
}

TEST(AlgebraicSimplifierTest, ConvertRewrites) {
  ExpectSimplifies(F32("  ROOT r = f32[4] convert(p)\n"), "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  w = f64[4] convert(p)\n  ROOT r = f32[4] convert(w)\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
  // f32 -> s32 -> f32 loses fractions.
  ExpectUnchanged(F32("  i = s32[4] convert(p)\n  ROOT r = f32[4] convert(i)\n"));
  // f32 -> bf16 -> f32 rounds.
  ExpectUnchanged(F32("  h = bf16[4] convert(p)\n  ROOT r = f32[4] convert(h)\n"));
}

TEST(AlgebraicSimplifierTest, ConstantRewrites) {
  ExpectSimplifies(F32("  c = f32[4] constant({7, 7, 7, 7})\n  ROOT r = f32[4] add(p, c)\n"),
                   "CHECK: f32[] constant(7)\nCHECK: broadcast(");
  ExpectSimplifies(S32("  c = s32[4] constant({0, 1, 2, 3})\n  ROOT r = s32[4] add(p, c)\n"),
                   "CHECK: iota(), iota_dimension=0");
  ExpectSimplifies(S32("  c = s32[4] constant({0, 3, 6, 9})\n  ROOT r = s32[4] add(p, c)\n"),
                   "CHECK: iota(), iota_dimension=0\nCHECK: s32[] constant(3)\nCHECK: multiply(");
  ExpectUnchanged(S32("  c = s32[4] constant({5, 1, 2, 3})\n  ROOT r = s32[4] add(p, c)\n"));
}

TEST(AlgebraicSimplifierTest, CopyAndGetTupleElementOfTuple) {
  ExpectSimplifies(F32("  ROOT r = f32[4] copy(p)\n"), "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  t = (f32[4], f32[4]) tuple(p, q)\n"
                       "  ROOT r = f32[4] get-tuple-element(t), index=1\n"),
                   "CHECK: ROOT %q = f32[4] parameter(1)");
}

// A bitcast reads its operand's physical layout (XLA's optimized modules hold
// them): the copy it reads keeps its layout, the copy nothing bitcasts goes.
TEST(AlgebraicSimplifierTest, KeepsTheLayoutABitcastReads) {
  PassRun run = RunPass("algsimp", R"(HloModule m
ENTRY main {
  p = f32[2,3,4]{0,2,1} parameter(0)
  c1 = f32[2,3,4]{0,1,2} copy(p)
  c2 = f32[2,3,4]{2,1,0} copy(c1)
  ROOT b = f32[24]{0} bitcast(c2)
}
)");
  ASSERT_TRUE(run.changed);
  ExpectSameSemantics(run);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: %c1
CHECK: %c2 = f32[2,3,4]{2,1,0} copy(f32[2,3,4]{0,2,1} %p)
CHECK: ROOT %b = f32[24]{0} bitcast(
)");
}

// --------------------------------- shapes ----------------------------------

TEST(AlgebraicSimplifierTest, BroadcastAddingNoElementsIsReshape) {
  ExpectSimplifies(F32("  ROOT r = f32[1,4] broadcast(p), dimensions={1}\n"),
                   "CHECK: ROOT {{.*}} reshape(f32[4] %p)");
}

TEST(AlgebraicSimplifierTest, BroadcastOfBroadcastAndOfDegenerateReshape) {
  ExpectSimplifies(F32("  a = f32[3,4] broadcast(p), dimensions={1}\n"
                       "  ROOT r = f32[2,3,4] broadcast(a), dimensions={1,2}\n"),
                   "CHECK: ROOT {{.*}} broadcast(f32[4] %p), dimensions={2}");
  ExpectSimplifies(F32("  a = f32[4,1] reshape(p)\n"
                       "  ROOT r = f32[4,3] broadcast(a), dimensions={0,1}\n"),
                   "CHECK: ROOT {{.*}} broadcast(f32[4] %p), dimensions={0}");
}

TEST(AlgebraicSimplifierTest, SinksBroadcastBelowElementwiseOp) {
  ExpectSimplifies(F32("  a = f32[3,4] broadcast(p), dimensions={1}\n"
                       "  b = f32[3,4] broadcast(q), dimensions={1}\n"
                       "  ROOT r = f32[3,4] add(a, b)\n"),
                   "CHECK: add(f32[4] %p, f32[4] %q)\nCHECK: ROOT {{.*}} broadcast(");
  // Broadcasts along different dims cannot be sunk.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a = f32[4,4] broadcast(p), dimensions={1}
  b = f32[4,4] broadcast(q), dimensions={0}
  ROOT r = f32[4,4] add(a, b)
})");
}

TEST(AlgebraicSimplifierTest, BroadcastOfIotaIsIota) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  i = s32[4] iota(), iota_dimension=0
  ROOT r = s32[3,4] broadcast(i), dimensions={1}
})",
                   "CHECK: ROOT {{.*}} iota(), iota_dimension=1");
}

TEST(AlgebraicSimplifierTest, ReshapeRewrites) {
  ExpectSimplifies(F32("  a = f32[2,2] reshape(p)\n  ROOT r = f32[1,4] reshape(a)\n"),
                   "CHECK: ROOT {{.*}} reshape(f32[4] %p)");
  ExpectSimplifies(F32("  ROOT r = f32[4] reshape(p)\n"), "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  a = f32[3,4] broadcast(p), dimensions={1}\n"
                       "  ROOT r = f32[3,1,4] reshape(a)\n"),
                   "CHECK: ROOT {{.*}} broadcast(f32[4] %p), dimensions={2}");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  i = s32[6] iota(), iota_dimension=0
  ROOT r = s32[2,3] reshape(i)
})",
                   "CHECK: iota(), iota_dimension=1\nCHECK: iota(), iota_dimension=0\n"
                   "CHECK: multiply(\nCHECK: ROOT {{.*}} add(");
}

// A reshape that only adds or drops size-1 dims moves above the dynamic-update-slice it is the
// one user of (PyTorch/XLA's index_put of one element, torch.linspace's last point, before the
// view): the inserted dims start at one zero of the start indices' type, a dropped dim loses its
// start index.
TEST(AlgebraicSimplifierTest, ReshapeOfDynamicUpdateSliceIsDynamicUpdateSliceOfReshapes) {
  PassRun inserted = RunPass("algsimp", R"(HloModule m
ENTRY main {
  a = f32[8] parameter(0)
  u = f32[1] parameter(1)
  i = s64[] parameter(2)
  d = f32[8] dynamic-update-slice(a, u, i)
  ROOT r = f32[1,8,1] reshape(d)
})");
  EXPECT_TRUE(inserted.changed);
  EXPECT_CHECKS(inserted.after, R"(
CHECK: %reshape = f32[1,8,1] reshape(f32[8] %a)
CHECK: %reshape.1 = f32[1,1,1] reshape(f32[1] %u)
CHECK: %constant = s64[] constant(0)
CHECK: ROOT {{.*}} dynamic-update-slice(f32[1,8,1] %reshape, f32[1,1,1] %reshape.1, s64[] %constant, s64[] %i, s64[] %constant))");
  ExpectSameSemantics(inserted, 5);
  PassRun deleted = RunPass("algsimp", R"(HloModule m
ENTRY main {
  a = f32[1,8] parameter(0)
  u = f32[1,2] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  d = f32[1,8] dynamic-update-slice(a, u, i, j)
  ROOT r = f32[8] reshape(d)
})");
  EXPECT_TRUE(deleted.changed);
  EXPECT_CHECKS(deleted.after, R"(
CHECK: ROOT {{.*}} dynamic-update-slice(f32[8] %{{.*}}, f32[2] %{{.*}}, s32[] %j))");
  ExpectSameSemantics(deleted, 5);
  // Not where the dynamic-update-slice has another user.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  a = f32[8] parameter(0)
  u = f32[1] parameter(1)
  i = s64[] parameter(2)
  d = f32[8] dynamic-update-slice(a, u, i)
  r = f32[1,8] reshape(d)
  ROOT t = (f32[1,8], f32[8]) tuple(r, d)
})");
}

// A dynamic-slice of a dynamic-slice slices the first operand at outer + clamp(inner): the inner
// index bounded by the operand's size less the outer slice's (XLA's bound), converted to the
// outer indices' type, added in every dimension (the constant ones fold later), the inner slice
// left for DCE. XLA's QR decomposition reads its pivot so (a column, then its element j).
TEST(AlgebraicSimplifierTest, DynamicSliceOfADynamicSliceSlicesItsOperand) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  a = f32[6,6] parameter(0)
  j = s32[] parameter(1)
  k = s64[] parameter(2)
  zero = s32[] constant(0)
  zero64 = s64[] constant(0)
  column = f32[6,2] dynamic-slice(a, zero, j), dynamic_slice_sizes={6,2}
  ROOT element = f32[1,1] dynamic-slice(column, k, zero64), dynamic_slice_sizes={1,1}
})",
                   R"(
CHECK: %column = f32[6,2] dynamic-slice(
CHECK: %constant.1 = s32[] constant(5)
CHECK: %clamp = s32[] clamp(s32[] %constant, s32[] %zero, s32[] %constant.1)
CHECK: %add = s64[] add(s64[] %k, s64[] %convert)
CHECK: %clamp.1 = s32[] clamp(s32[] %constant.2, s32[] %j, s32[] %constant.3)
CHECK: %convert.1 = s64[] convert(s32[] %clamp.1)
CHECK: ROOT %element = f32[1,1] dynamic-slice(f32[6,6] %a, s64[] %add, s64[] %convert.1))");
}

TEST(AlgebraicSimplifierTest, TransposeRewrites) {
  ExpectSimplifies(F32("  a = f32[2,2] reshape(p)\n  t = f32[2,2] transpose(a), dimensions={1,0}\n"
                       "  ROOT r = f32[2,2] transpose(t), dimensions={1,0}\n"),
                   "CHECK-NOT: transpose\nCHECK: ROOT {{.*}} reshape(f32[4] %p)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = f32[3,1] parameter(0)
  ROOT r = f32[1,3] transpose(p), dimensions={1,0}
})",
                   "CHECK: ROOT {{.*}} reshape(f32[3,1] %p)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  b = f32[3,4] broadcast(p), dimensions={1}
  ROOT r = f32[4,3] transpose(b), dimensions={1,0}
})",
                   "CHECK: ROOT {{.*}} broadcast(f32[4] %p), dimensions={0}");
}

// A chain of reshapes and transposes that only moves one size-1 dimension
// about and puts the others back (jnp.linalg.solve's result, moved through a
// [n,1,m] view and transposed twice) is its input, from either end.
TEST(AlgebraicSimplifierTest, ReshapeTransposeChainThatPutsEverythingBackIsItsInput) {
  constexpr std::string_view kChain = R"(HloModule m
ENTRY main {
  x = f32[8,6] parameter(0)
  r = f32[8,1,6] reshape(x)
  t = f32[6,8,1] transpose(r), dimensions={2,0,1}
  s = f32[6,8] reshape(t)
  ROOT u = f32[8,6] transpose(s), dimensions={1,0}
})";
  ExpectSimplifies(kChain, "CHECK: ROOT %x = f32[8,6] parameter(0)");
  // Ending in a reshape back to the input's shape.
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  x = f32[8,6] parameter(0)
  r = f32[8,1,6] reshape(x)
  t = f32[1,8,6] transpose(r), dimensions={1,0,2}
  ROOT s = f32[8,6] reshape(t)
})",
                   "CHECK: ROOT %x = f32[8,6] parameter(0)");
  // The others not put back (x transposed, of x's own shape): not x.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  x = f32[6,6] parameter(0)
  r = f32[6,1,6] reshape(x)
  t = f32[6,6,1] transpose(r), dimensions={2,0,1}
  ROOT s = f32[6,6] reshape(t)
})");
  // Two size-1 dimensions in one shape: XLA leaves the chain.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  x = f32[8,6] parameter(0)
  r = f32[8,1,1,6] reshape(x)
  t = f32[6,1,8,1] transpose(r), dimensions={3,1,0,2}
  s = f32[6,8] reshape(t)
  ROOT u = f32[8,6] transpose(s), dimensions={1,0}
})");
}

TEST(AlgebraicSimplifierTest, TransposeOfDotSwapsOperands) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,5] parameter(1)
  d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[5,2] transpose(d), dimensions={1,0}
})",
                   "CHECK: ROOT {{.*}} dot(f32[3,5] %b, f32[2,3] %a), lhs_contracting_dims={0}, "
                   "rhs_contracting_dims={1}");
}

// Attention's head split: reshape [b,s,h*d] -> [b,s,h,d], move h before s,
// merge it into b: the same as concatenating the h column blocks of x.
std::string HeadSplit(int64_t heads, std::string_view extra_user = "") {
  const std::string h = std::to_string(heads), hd = std::to_string(heads * 3);
  return "HloModule m\nENTRY main {\n  x = f32[2,4," + hd + "] parameter(0)\n" + "  r1 = f32[2,4," +
         h + ",3] reshape(x)\n" + "  t = f32[2," + h +
         ",4,3] transpose(r1), dimensions={0,2,1,3}\n" + std::string(extra_user) +
         "  ROOT r2 = f32[" + std::to_string(2 * heads) + ",4,3] reshape(t)\n}\n";
}

TEST(AlgebraicSimplifierTest, HeadSplitTransposeIsAConcatenateOfSlices) {
  const std::string hlo = HeadSplit(2);
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,4,3] slice(f32[2,4,6] %x), slice={[0:2], [0:4], [0:3]}
CHECK: f32[2,4,3] slice(f32[2,4,6] %x), slice={[0:2], [0:4], [3:6]}
CHECK: f32[2,8,3] concatenate({{.*}}), dimensions={1}
CHECK: ROOT {{.*}} = f32[4,4,3] reshape(f32[2,8,3] %{{.*}})
)");
  // XLA leaves the transpose and the inner reshape for DCE.
  EXPECT_CHECKS(run.after, "CHECK: transpose(");
  ExpectSameSemantics(run);
  // XLA's limit is 5 slices; a transpose with another user stays.
  ExpectUnchanged(HeadSplit(6));
  ExpectUnchanged(HeadSplit(2, "  n = f32[2,2,4,3] negate(t)\n"));
}

TEST(AlgebraicSimplifierTest, SliceRewrites) {
  ExpectSimplifies(F32("  ROOT r = f32[4] slice(p), slice={[0:4]}\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  a = f32[3] slice(p), slice={[1:4]}\n"
                       "  ROOT r = f32[2] slice(a), slice={[1:3]}\n"),
                   "CHECK: ROOT {{.*}} slice(f32[4] %p), slice={[2:4]}");
  ExpectSimplifies(F32("  c = f32[8] concatenate(p, q), dimensions={0}\n"
                       "  ROOT r = f32[4] slice(c), slice={[4:8]}\n"),
                   "CHECK: ROOT %q = f32[4] parameter(1)");
  ExpectSimplifies(F32("  b = f32[3,4] broadcast(p), dimensions={1}\n"
                       "  ROOT r = f32[2,4] slice(b), slice={[0:2], [0:4]}\n"),
                   "CHECK: ROOT {{.*}} broadcast(f32[4] %p), dimensions={1}");
  ExpectSimplifies(F32("  z = f32[] constant(0)\n"
                       "  a = f32[8] pad(p, z), padding=2_2\n"
                       "  ROOT r = f32[4] slice(a), slice={[2:6]}\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
}

TEST(AlgebraicSimplifierTest, ConcatenateRewrites) {
  ExpectSimplifies(F32("  ROOT r = f32[4] concatenate(p), dimensions={0}\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(
      F32("  a = f32[2] slice(p), slice={[0:2]}\n  b = f32[2] slice(p), slice={[2:4]}\n"
          "  ROOT r = f32[4] concatenate(a, b), dimensions={0}\n"),
      "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  z = f32[] constant(0)\n  b = f32[2] broadcast(z), dimensions={}\n"
                       "  ROOT r = f32[6] concatenate(p, b), dimensions={0}\n"),
                   "CHECK: ROOT {{.*}} pad(f32[4] %p, f32[] %z), padding=0_2");
}

TEST(AlgebraicSimplifierTest, PadRewrites) {
  ExpectSimplifies(F32("  z = f32[] constant(0)\n  ROOT r = f32[4] pad(p, z), padding=0_0\n"),
                   "CHECK: ROOT %p = f32[4] parameter");
  ExpectSimplifies(F32("  z = f32[] constant(0)\n  ROOT r = f32[3] pad(p, z), padding=-1_0\n"),
                   "CHECK: ROOT {{.*}} slice(f32[4] %p), slice={[1:4]}");
}

// pad(broadcast(x)) pads only the dimensions it pads, then broadcasts: XLA's
// result on the shifted labels of Hugging Face causal language models on
// PyTorch/XLA (pred[2,15] broadcast, padded to [2,16] along dimension 1). The
// broadcast must have one user, and x's dimensions must all be padded ones.
TEST(AlgebraicSimplifierTest, PadOfBroadcastPadsTheDimensionsItPads) {
  auto module = [](std::string_view broadcast, std::string_view rest) {
    return "HloModule m\nENTRY main {\n  x = f32[3] parameter(0)\n  c = f32[] constant(0)\n  b = " +
           std::string(broadcast) + "\n" + std::string(rest) + "}\n";
  };
  ExpectSimplifies(module("f32[4,3] broadcast(x), dimensions={1}",
                          "  ROOT r = f32[4,6] pad(b, c), padding=0_0x1_2\n"),
                   R"(CHECK: f32[6] pad(f32[3] %x, f32[] %c), padding=1_2
CHECK: ROOT {{.*}} f32[4,6] broadcast({{.*}}), dimensions={1})");
  // Of a scalar (the labels' case): the broadcast narrowed to the padded
  // dimension stays.
  ExpectSimplifies(module("f32[2,15] broadcast(c), dimensions={}",
                          "  ROOT r = f32[2,16] pad(b, c), padding=0_0x1_0\n"),
                   R"(CHECK: %b = f32[15] broadcast(f32[] %c), dimensions={}
CHECK: f32[16] pad(f32[15] %b, f32[] %c), padding=1_0
CHECK: ROOT {{.*}} f32[2,16] broadcast({{.*}}), dimensions={1})");
  // x's dimension is not padded, or the broadcast has another user: unchanged.
  ExpectUnchanged(module("f32[3,4] broadcast(x), dimensions={0}",
                         "  ROOT r = f32[3,6] pad(b, c), padding=0_0x1_1\n"));
  ExpectUnchanged(module("f32[4,3] broadcast(x), dimensions={1}",
                         "  p = f32[4,6] pad(b, c), padding=0_0x1_2\n"
                         "  ROOT t = (f32[4,6], f32[4,3]) tuple(p, b)\n"));
}

// bitcast-convert: to its own type it is its operand (TensorFlow's stateless
// dropout keys, u64 to u64, in Keras' applications on TensorFlow: all eight
// of their steps as XLA receives them end at X with this); a chain keeps its
// last; of a concatenate of bitcast-converts from the outer type, the
// concatenate of their operands.
TEST(AlgebraicSimplifierTest, BitcastConvertRewrites) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = u64[2] parameter(0)
  ROOT r = u64[2] bitcast-convert(p)
})",
                   "CHECK: ROOT %p = u64[2] parameter(0)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  b = s32[4] bitcast-convert(p)
  ROOT r = u32[4] bitcast-convert(b)
})",
                   "CHECK: ROOT {{.*}} u32[4] bitcast-convert(f32[4] %p)");
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[2] parameter(1)
  a = s32[4] bitcast-convert(p)
  b = s32[2] bitcast-convert(q)
  c = s32[6] concatenate(a, b), dimensions={0}
  ROOT r = f32[6] bitcast-convert(c)
})",
                   "CHECK: ROOT {{.*}} f32[6] concatenate(f32[4] %p, f32[2] %q), dimensions={0}");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = s32[4] bitcast-convert(p)
})");
}

// A slice keeping a prefix of a reshape's major dimension is a reshape of a
// slice of the reshape's operand (XLA's result on a PyTorch/XLA attention's
// q/k/v split, as XLA receives it); slices elsewhere, or whose elements are no
// prefix of the operand's, stay.
TEST(AlgebraicSimplifierTest, MajorPrefixSliceOfReshapeIsReshapeOfSlice) {
  auto module = [](std::string_view operand, std::string_view reshaped, std::string_view slice) {
    return "HloModule m\nENTRY main {\n  p = " + std::string(operand) +
           " parameter(0)\n  r = " + std::string(reshaped) +
           " reshape(p)\n  ROOT s = " + std::string(slice) + "\n}\n";
  };

  ExpectSimplifies(
      module("f32[3,8,2,1,4]", "f32[3,8,2,4]",
             "f32[1,8,2,4] slice(r), slice={[0:1], [0:8], [0:2], [0:4]}"),
      R"(CHECK: f32[1,8,2,1,4] slice(f32[3,8,2,1,4] %p), slice={[0:1], [0:8], [0:2], [0:1], [0:4]}
CHECK: ROOT {{.*}} f32[1,8,2,4] reshape()");
  ExpectSimplifies(module("f32[2,6]", "f32[4,3]", "f32[2,3] slice(r), slice={[0:2], [0:3]}"),
                   R"(CHECK: f32[1,6] slice(f32[2,6] %p), slice={[0:1], [0:6]}
CHECK: ROOT {{.*}} f32[2,3] reshape()");
  ExpectUnchanged(module("f32[3,8,2,1,4]", "f32[3,8,2,4]",
                         "f32[1,8,2,4] slice(r), slice={[1:2], [0:8], [0:2], [0:4]}"));
  ExpectUnchanged(module("f32[6,4]", "f32[4,6]", "f32[1,6] slice(r), slice={[0:1], [0:6]}"));
  ExpectUnchanged(
      module("f32[4,6]", "f32[4,6,1]", "f32[4,3,1] slice(r), slice={[0:4], [0:3], [0:1]}"));
}

// slice(reverse(x)) slices x where the slice's elements lie, mirrored along
// the reversed dimensions (strides kept: the mirrored slice starts at its
// last picked element); the reverse stays where a reversed dimension keeps
// more than one element. XLA's dump of the rbg PRNG's Philox generator:
// slice(reverse(u64[2] state)), [0:1] became a slice [1:2] of the state.
TEST(AlgebraicSimplifierTest, SliceOfReverseSlicesTheOperand) {
  auto module = [](std::string_view operand, std::string_view slice) {
    return "HloModule m\nENTRY main {\n  p = " + std::string(operand) +
           " parameter(0)\n  r = " + std::string(operand) +
           " reverse(p), dimensions={0}\n  ROOT s = " + std::string(slice) + "\n}\n";
  };
  ExpectSimplifies(module("u64[2]", "u64[1] slice(r), slice={[0:1]}"),
                   R"(CHECK: ROOT {{.*}} u64[1] slice(u64[2] %p), slice={[1:2]}
CHECK-NOT: reverse)");
  ExpectSimplifies(module("f32[10,3]", "f32[3,2] slice(r), slice={[1:8:3], [0:2]}"),
                   R"(CHECK: f32[3,2] slice(f32[10,3] %p), slice={[2:9:3], [0:2]}
CHECK: ROOT {{.*}} f32[3,2] reverse(f32[3,2] %slice), dimensions={0})");
}

// reduce-window rewrites, as the pinned XLA makes them on torchvision's
// models from PyTorch/XLA (max pooling after an explicit pad; all twelve
// modules of ViT, ResNet, MobileNetV3, EfficientNet and ConvNeXt steps then
// end at X).
std::string ReduceWindowModule(std::string_view body) {
  return R"(HloModule m
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,4,6,6] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
)" + std::string(body) +
         "}\n";
}

TEST(AlgebraicSimplifierTest, ReduceWindowFoldsAPadWithItsInitValue) {
  PassRun run = RunPass("algsimp", ReduceWindowModule(R"(
  pad = f32[2,4,8,8] pad(p, ninf), padding=0_0x0_0x1_1x1_1
  ROOT r = f32[2,4,3,3] reduce-window(pad, ninf), window={size=1x1x3x3 stride=1x1x2x2}, to_apply=max_f32
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} reduce-window(f32[2,4,6,6] %p, f32[] %ninf), window={size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}
CHECK-NOT: pad(
)");
  ExpectSameSemantics(run);
  // A pad with another value stays.
  ExpectUnchanged(ReduceWindowModule(R"(
  pad = f32[2,4,8,8] pad(p, zero), padding=0_0x0_0x1_1x1_1
  ROOT r = f32[2,4,3,3] reduce-window(pad, ninf), window={size=1x1x3x3 stride=1x1x2x2}, to_apply=max_f32
)"));
}

// A variadic reduce-window (a max with its index, as an argmax pooling
// writes it): over no elements, the init values broadcast; over scalars, with
// a reducer ending in a tuple, the inputs themselves; otherwise left alone,
// as XLA leaves it.
std::string VariadicReduceWindowModule(const std::string& shapes, const std::string& window) {
  return R"(HloModule m
max_with_index {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  m = f32[] select(ge, a, b)
  k = s32[] select(ge, i, j)
  ROOT t = (f32[], s32[]) tuple(m, k)
}
ENTRY main {
  x = f32[)" +
         shapes + R"(] parameter(0)
  ix = s32[)" +
         shapes + R"(] parameter(1)
  ninf = f32[] constant(-inf)
  none = s32[] constant(-1)
  ROOT r = (f32[)" +
         shapes + "], s32[" + shapes + "]) reduce-window(x, ix, ninf, none), " + window +
         R"(, to_apply=max_with_index
}
)";
}

TEST(AlgebraicSimplifierTest, VariadicReduceWindowOverNothingOrScalars) {
  PassRun run =
      RunPass("algsimp", VariadicReduceWindowModule("0,4", "window={size=1x2 pad=0_0x0_1}"));
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[0,4] broadcast(f32[] %ninf), dimensions={}
CHECK: s32[0,4] broadcast(s32[] %none), dimensions={}
CHECK: ROOT {{.*}} (f32[0,4], s32[0,4]) tuple(
)");
  ExpectSameSemantics(run);
  run = RunPass("algsimp", VariadicReduceWindowModule("", "window={}"));
  EXPECT_CHECKS(run.after, "CHECK: ROOT {{.*}} (f32[], s32[]) tuple(f32[] %x, s32[] %ix)");
  ExpectSameSemantics(run);
  ExpectUnchanged(VariadicReduceWindowModule("8", "window={size=1}"));
}

TEST(AlgebraicSimplifierTest, ReduceWindowOfUnitWindowsWholeDimensionsAndConstantSums) {
  // One-element windows: the reduction with the init value, elementwise, then
  // a pad with it where the window pads.
  PassRun run = RunPass("algsimp", ReduceWindowModule(R"(
  one = f32[] constant(1)
  ROOT r = f32[2,4,8,6] reduce-window(p, one), window={size=1x1x1x1 pad=0_0x0_0x1_1x0_0}, to_apply=add_f32
)"));
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,4,6,6] add(f32[2,4,6,6] %p, f32[2,4,6,6] %broadcast)
CHECK: ROOT {{.*}} f32[2,4,8,6] pad({{.*}}, f32[] %one), padding=0_0x0_0x1_1x0_0
)");
  ExpectSameSemantics(run);
  // A window over whole dimensions: a reduce, reshaped.
  run = RunPass("algsimp", ReduceWindowModule(R"(
  ROOT r = f32[2,4,1,1] reduce-window(p, ninf), window={size=1x1x6x6}, to_apply=max_f32
)"));
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,4] reduce(f32[2,4,6,6] %p, f32[] %ninf), dimensions={2,3}, to_apply=%max_f32
CHECK: ROOT {{.*}} f32[2,4,1,1] reshape(
)");
  ExpectSameSemantics(run);
  // A cumulative sum of a broadcast constant: c * (1 + iota).
  run = RunPass("algsimp", ReduceWindowModule(R"(
  c = f32[] constant(2.5)
  b = f32[3,5] broadcast(c), dimensions={}
  ROOT r = f32[3,5] reduce-window(b, zero), window={size=1x5 pad=0_0x4_0}, to_apply=add_f32
)"));
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[3,5] iota(), iota_dimension=1
CHECK: ROOT {{.*}} f32[3,5] multiply(
)");
  ExpectSameSemantics(run);
}

TEST(AlgebraicSimplifierTest, DynamicSliceRewrites) {
  ExpectSimplifies(F32("  i = s32[] constant(1)\n"
                       "  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}\n"),
                   "CHECK: ROOT {{.*}} slice(f32[4] %p), slice={[1:3]}");
  ExpectSimplifies(F32("  i = s32[] constant(9)\n"
                       "  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}\n"),
                   "CHECK: ROOT {{.*}} slice(f32[4] %p), slice={[2:4]}");
  ExpectSimplifies(F32("  i = s32[] parameter(2)\n"
                       "  ROOT r = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}\n"),
                   "CHECK: ROOT %p = f32[4] parameter(0)");
  ExpectUnchanged(
      F32("  i = s32[] parameter(2)\n"
          "  ROOT r = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}\n"));
}

// A partition's offset, picked by partition-id from the table of every
// partition's (the SPMD partitioner writes one): the algsimp computes it,
// partition-id times the stride, the clamp gone where every id is in range.
TEST(AlgebraicSimplifierTest, APartitionsOffsetFromItsTableIsComputed) {
  constexpr std::string_view kOffset = R"(HloModule m, num_partitions=PARTITIONS
ENTRY main {
  table = s32[4] constant({0, 2, 4, 6})
  id = u32[] partition-id()
  pick = s32[1] dynamic-slice(table, id), dynamic_slice_sizes={1}
  ROOT offset = s32[] reshape(pick)
})";
  auto with_partitions = [&](std::string_view n) {
    std::string hlo(kOffset);
    hlo.replace(hlo.find("PARTITIONS"), 10, n);
    return hlo;
  };
  ExpectSimplifies(with_partitions("4"), R"(
CHECK: %id = u32[] partition-id()
CHECK: s32[] convert(u32[] %id)
CHECK: ROOT {{.*}} s32[] multiply(
)");
  // Eight partitions: ids above the table's last index are clamped.
  ExpectSimplifies(with_partitions("8"), R"(
CHECK: u32[] clamp(u32[] {{.*}}, u32[] %id, u32[] {{.*}})
CHECK: ROOT {{.*}} s32[] multiply(
)");
}

// TensorFlow's while-loop gradients add an update written into zeros to an
// accumulator: only the updated part is added (the pinned XLA's dump of a
// bidirectional LSTM's gradient does this), either operand order.
TEST(AlgebraicSimplifierTest, AddOfAnUpdateOfZerosAddsOnlyTheUpdatedPart) {
  for (const std::string order : {"add(acc, dus)", "add(dus, acc)"}) {
    const std::string hlo = absl::StrCat(R"(HloModule m
ENTRY main {
  acc = f32[10,4] parameter(0)
  u = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  zero = f32[] constant(0)
  zeros = f32[10,4] broadcast(zero), dimensions={}
  z = s32[] constant(0)
  dus = f32[10,4] dynamic-update-slice(zeros, u, i, z)
  ROOT r = f32[10,4] )",
                                         order, "\n}\n");
    PassRun run = RunPass("algsimp", hlo);
    EXPECT_TRUE(run.changed) << order;
    EXPECT_CHECKS(run.after, R"(
CHECK: f32[1,4] dynamic-slice(f32[10,4] %acc, s32[] %i, s32[] %z), dynamic_slice_sizes={1,4}
CHECK: f32[1,4] add(
CHECK: ROOT {{.*}} = f32[10,4] dynamic-update-slice(f32[10,4] %acc, f32[1,4] {{.*}}, s32[] %i, s32[] %z)
)");
    ExpectSameSemantics(run);
  }
}

// reverse(reshape(x)) for a reshape that only adds 1s reverses x and then
// reshapes, the size-1 reversed dimension dropped, also where the reshape is
// read elsewhere (the pinned XLA's dumps of these modules: a Keras Conv1D
// kernel's gradient); where the reshape drops 1s, XLA leaves it, and so does
// hlogym.
TEST(AlgebraicSimplifierTest, ReverseOfAReshapeAddingOnesIsReversedFirst) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  a = f32[3,16] parameter(0)
  r = f32[1,3,16] reshape(a)
  v = f32[1,3,16] reverse(r), dimensions={0,1}
  n = f32[1,3,16] negate(r)
  ROOT t = (f32[1,3,16], f32[1,3,16]) tuple(v, n)
}
)",
                   R"(
CHECK: f32[3,16] reverse(f32[3,16] %a), dimensions={0}
CHECK: f32[1,3,16] reshape(
CHECK: %n = f32[1,3,16] negate(
)");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  a = f32[1,3,16] parameter(0)
  r = f32[3,16] reshape(a)
  ROOT v = f32[3,16] reverse(r), dimensions={0}
}
)");
}

// Starts along dimensions the update spans whole become one shared zero of the first start's
// type, as XLA makes it (the pinned XLA's dump of a gymnax MinAtar step: one constant per
// update, not one per dimension).
TEST(AlgebraicSimplifierTest, UpdateStartsAlongWholeDimensionsShareOneZero) {
  PassRun run = RunPass("algsimp", R"(HloModule m
ENTRY main {
  a = f32[4,10,10,4] parameter(0)
  u = f32[4,10,10,1] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[4,10,10,4] dynamic-update-slice(a, u, i, i, j, j)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %constant = s32[] constant(0)
CHECK-NOT: constant(
CHECK: dynamic-update-slice(f32[4,10,10,4] %a, f32[4,10,10,1] %u, s32[] %constant, s32[] %constant, s32[] %constant, /*index=5*/s32[] %j)
)");
  ExpectSameSemantics(run);
}

// select(p, dus(xs, x, i), xs) and select(p, xs, dus(xs, x, i)) select within the updated window
// only: dus(xs, select(ds(p, i), x, ds(xs, i)), i), the predicate sliced unless it is a scalar
// (the pinned XLA's dump of a gymnax MinAtar rollout, whose auto-reset picks between the stepped
// state and the old one).
TEST(AlgebraicSimplifierTest, SelectOfAnUpdateAndItsBaseSelectsInTheWindow) {
  const std::string module = R"(HloModule m
ENTRY main {
  xs = f32[4,10] parameter(0)
  x = f32[4,3] parameter(1)
  i = s32[] parameter(2)
  p = %PRED parameter(3)
  z = s32[] constant(0)
  d = f32[4,10] dynamic-update-slice(xs, x, z, i)
  ROOT s = f32[4,10] select(p, %OPERANDS)
}
)";
  auto with = [&](const char* pred, const char* operands) {
    return absl::StrReplaceAll(module, {{"%PRED", pred}, {"%OPERANDS", operands}});
  };
  PassRun run = RunPass("algsimp", with("pred[4,10]", "d, xs"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: pred[4,3] dynamic-slice(pred[4,10] %p, s32[] %z, s32[] %i), dynamic_slice_sizes={4,3}
CHECK: %dynamic-slice.1 = f32[4,3] dynamic-slice(f32[4,10] %xs, s32[] %z, s32[] %i), dynamic_slice_sizes={4,3}
CHECK: f32[4,3] select(pred[4,3] {{.*}}, f32[4,3] %x, f32[4,3] %dynamic-slice.1)
CHECK: ROOT {{.*}} = f32[4,10] dynamic-update-slice(f32[4,10] %xs, f32[4,3] %select, s32[] %z, s32[] %i)
)");
  ExpectSameSemantics(run);
  run = RunPass("algsimp", with("pred[]", "xs, d"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: pred[4,3]
CHECK: f32[4,3] select(pred[] %p, f32[4,3] %dynamic-slice, f32[4,3] %x)
CHECK: ROOT {{.*}} = f32[4,10] dynamic-update-slice(f32[4,10] %xs, f32[4,3] %select, s32[] %z, s32[] %i)
)");
  ExpectSameSemantics(run);
  // Not when the update has another user, nor when it writes into something else.
  std::string shared = with("pred[4,10]", "d, xs");
  shared.replace(shared.find("ROOT s"), 6, "s");
  shared.insert(shared.rfind('}'), "  ROOT t = (f32[4,10], f32[4,10]) tuple(s, d)\n");
  ExpectUnchanged(shared);
  std::string other = with("pred[4,10]", "d, y");
  other.insert(other.find("  ROOT s"), "  y = f32[4,10] parameter(4)\n");
  ExpectUnchanged(other);
}

TEST(AlgebraicSimplifierTest, DotOfAReorderedContractingDimMovesTheReorderToTheConstant) {
  // interpax's and e3nn-jax's shape: the contracting dim is a merge of dims a
  // transpose reordered; the reorder moves to the constant (which constant
  // folding then folds) and the dot reads the merge of x.
  const std::string module = R"(HloModule m
ENTRY main {
  x = f32[2,2,3] parameter(0)
  t = f32[2,3,2] transpose(x), dimensions=%PERMUTATION
  r = f32[2,6] reshape(t)
  c = f32[6,2] constant({{1,2},{3,4},{5,6},{7,8},{9,10},{11,12}})
  ROOT d = f32[2,2] dot(%OPERANDS), lhs_contracting_dims={%LHS}, rhs_contracting_dims={%RHS}
}
)";
  auto with = [&](const char* permutation, const char* operands, const char* lhs, const char* rhs) {
    return absl::StrReplaceAll(
        module,
        {{"%PERMUTATION", permutation}, {"%OPERANDS", operands}, {"%LHS", lhs}, {"%RHS", rhs}});
  };
  PassRun run = RunPass("algsimp", with("{0,2,1}", "r, c", "1", "0"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: transpose(f32[2,2,3] %x)
CHECK: %reshape.2 = f32[2,6] reshape(f32[2,2,3] %x)
CHECK: f32[3,2,2] reshape(f32[6,2] %c)
CHECK: f32[2,3,2] transpose(f32[3,2,2] %reshape), dimensions={1,0,2}
CHECK: f32[6,2] reshape(f32[2,3,2] %transpose)
CHECK: ROOT {{.*}} = f32[2,2] dot(f32[2,6] %reshape.2, f32[6,2] %reshape.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)");
  ExpectSameSemantics(run);
  // The constant first: the operands keep their order.
  run = RunPass("algsimp", with("{0,2,1}", "c, r", "0", "1"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ROOT {{.*}} = f32[2,2] dot(f32[6,2] %reshape.1, f32[2,6] %reshape.2), lhs_contracting_dims={0}, rhs_contracting_dims={1}
)");
  ExpectSameSemantics(run);
  // Not when the transpose also moves the dim the reshape passes through.
  ExpectUnchanged(with("{1,2,0}", "r, c", "1", "0"));
}

// ---------------------------------- gather ----------------------------------

// A gather of whole rows (`slice_sizes`) of `operand` into f32[2,6].
std::string RowGather(std::string_view body, std::string_view operand,
                      std::string_view slice_sizes) {
  return "HloModule m\nENTRY main {\n  i = s32[2,1] parameter(1)\n" + std::string(body) +
         "  ROOT g = f32[2,6] gather(" + std::string(operand) +
         ", i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
         "index_vector_dim=1, slice_sizes=" +
         std::string(slice_sizes) + "\n}\n";
}

TEST(AlgebraicSimplifierTest, GatherOfABitcastOfAPadGathersBeforePadding) {
  // MuJoCo MJX's shape: a zero-padded vector made a row, then rows gathered
  // whole. The pad moves below a gather of the unpadded row.
  const std::string body =
      "  x = f32[3] parameter(0)\n  z = f32[] constant(0)\n"
      "  p = f32[6] pad(x, z), padding=3_0\n  r = f32[1,6]{1,0} reshape(p)\n";
  PassRun run = RunPass("algsimp", RowGather(body, "r", "{1,6}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %reshape = f32[1,3]{1,0} reshape(f32[3] %x)
CHECK: f32[2,3] gather(f32[1,3]{1,0} %reshape, s32[2,1] %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
CHECK: ROOT {{.*}} = f32[2,6] pad(f32[2,3] %gather, f32[] %z), padding=0_0x3_0
)");
  ExpectSameSemantics(run);
  // Not when the gather takes part of the padded dimension.
  std::string partial = RowGather(body, "r", "{1,4}");
  partial = absl::StrReplaceAll(partial, {{"f32[2,6] gather", "f32[2,4] gather"}});
  ExpectUnchanged(partial);
}

TEST(AlgebraicSimplifierTest, GatherOfAPadAlongWholeSlicesGathersBeforePadding) {
  const std::string module = R"(HloModule m
ENTRY main {
  x = f32[4,3] parameter(0)
  i = s32[2,1] parameter(1)
  z = f32[] constant(0)
  p = f32[%ROWS,5] pad(x, z), padding=%PADDING
  ROOT g = f32[2,5] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
}
)";
  PassRun run =
      RunPass("algsimp", absl::StrReplaceAll(module, {{"%ROWS", "4"}, {"%PADDING", "0_0x1_1"}}));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,3] gather(f32[4,3] %x, s32[2,1] %i), {{.*}}slice_sizes={1,3}
CHECK: ROOT {{.*}} = f32[2,5] pad(f32[2,3] %gather, f32[] %z), padding=0_0x1_1
)");
  ExpectSameSemantics(run);
  // Not when a gathered (collapsed) dimension is padded too.
  ExpectUnchanged(absl::StrReplaceAll(module, {{"%ROWS", "5"}, {"%PADDING", "1_0x1_1"}}));
}

TEST(AlgebraicSimplifierTest, GatherOfAPadAlongBatchingDimsGathersTheUnpaddedIndices) {
  // The operand and the indices pad their batching dimension alike: the
  // gather runs on both unpadded and its result is padded there.
  const std::string module = R"(HloModule m
ENTRY main {
  x = f32[2,4,3] parameter(0)
  j = s32[2,5,1] parameter(1)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  p = f32[3,4,3] pad(x, z), padding=0_1x0_0x0_0
  idx = s32[3,5,1] pad(j, zi), padding=%INDEX_PADDING
  ROOT g = f32[3,5,3] gather(p, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={1,1,3}, operand_batching_dims={0}, start_indices_batching_dims={0}
}
)";
  PassRun run =
      RunPass("algsimp", absl::StrReplaceAll(module, {{"%INDEX_PADDING", "0_1x0_0x0_0"}}));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,5,3] gather(f32[2,4,3] %x, s32[2,5,1] %j), {{.*}}operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}
CHECK: ROOT {{.*}} = f32[3,5,3] pad(f32[2,5,3] %gather, f32[] %z), padding=0_1x0_0x0_0
)");
  ExpectSameSemantics(run);
  // Not when the indices are padded otherwise.
  ExpectUnchanged(absl::StrReplaceAll(module, {{"%INDEX_PADDING", "1_0x0_0x0_0"}}));
}

TEST(AlgebraicSimplifierTest, GatherOfOneElementIsABroadcast) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  x = f32[1,1] parameter(0)
  i = s32[5,2] parameter(1)
  ROOT g = f32[5] gather(x, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}
)",
                   R"(
CHECK: %reshape = f32[] reshape(f32[1,1] %x)
CHECK: ROOT {{.*}} = f32[5] broadcast(f32[] %reshape), dimensions={}
)");
}

TEST(AlgebraicSimplifierTest, GatherFromAFewElementsIsAChainOfSelects) {
  // Implicit scalar indices into at most four elements: each select takes
  // element k where the index is at least k, so indices out of range clamp.
  const std::string module = R"(HloModule m
ENTRY main {
  x = f32[%N] parameter(0)
  i = s32[5] parameter(1)
  ROOT g = f32[5] gather(x, i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
}
)";
  PassRun run = RunPass("algsimp", absl::StrReplaceAll(module, {{"%N", "3"}}));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: gather
CHECK: compare(s32[5] %i, {{.*}}), direction=GE
CHECK: select(
CHECK: select(
CHECK: ROOT {{.*}} = f32[5] select(
)");
  ExpectSameSemantics(run);
  ExpectUnchanged(absl::StrReplaceAll(module, {{"%N", "5"}}));
}

constexpr char kScatterAdd[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// A scatter whose indices are empty updates the whole operand: XLA maps its combiner over the
// operand and the updates (dynamiqs's sparse-diagonal products end in one), which inlines to an
// add; one with no updates is its operand.
TEST(AlgebraicSimplifierTest, ScatterOfTheWholeOperandIsItsCombinerElementwise) {
  PassRun run = RunPass("algsimp", std::string(kScatterAdd) + R"(ENTRY main {
  x = f32[16,1] parameter(0)
  y = f32[16,1] parameter(1)
  i = s32[0] constant({})
  ROOT s = f32[16,1] scatter(x, i, y), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: scatter
CHECK: ROOT {{.*}} = f32[16,1] add(f32[16,1] %x, f32[16,1] %y)
)");
  ExpectSameSemantics(run);
  ExpectSimplifies(std::string(kScatterAdd) + R"(ENTRY main {
  x = f32[16,1] parameter(0)
  y = f32[0,1] parameter(1)
  i = s32[1] constant({3})
  ROOT s = f32[16,1] scatter(x, i, y), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add
}
)",
                   "CHECK: ROOT %x = f32[16,1] parameter(0)");
}

// Such a scatter at the end of a chain of scatter-adds into zeros becomes an add, which the
// scatter-add rule then sinks to the chain's base: the whole update replaces the zeros (the pinned
// XLA's dump of dynamiqs's Schrödinger solve).
TEST(AlgebraicSimplifierTest, AChainOfScatterAddsTakesAWholeUpdateAsItsBase) {
  PassRun run = RunPass("algsimp", std::string(kScatterAdd) + R"(ENTRY main {
  x = f32[16,1] parameter(0)
  u = f32[13,1] parameter(1)
  v = f32[14,1] parameter(2)
  z = f32[] constant(0)
  b = f32[16,1] broadcast(z), dimensions={}
  i = s32[1] constant({3})
  j = s32[1] constant({2})
  s = f32[16,1] scatter(b, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=add
  t = f32[16,1] scatter(s, j, v), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=add
  k = s32[0] constant({})
  ROOT w = f32[16,1] scatter(t, k, x), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=0, indices_are_sorted=true, unique_indices=true, to_apply=add
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: broadcast
CHECK: %s = f32[16,1] scatter(f32[16,1] %x, s32[1] %i, f32[13,1] %u)
CHECK: ROOT %t = f32[16,1] scatter(f32[16,1] %s, s32[1] %j, f32[14,1] %v)
)");
  ExpectSameSemantics(run);
}

TEST(AlgebraicSimplifierTest, DynamicUpdateSliceOfFullUpdate) {
  ExpectSimplifies(F32("  i = s32[] parameter(2)\n"
                       "  ROOT r = f32[4] dynamic-update-slice(p, q, i)\n"),
                   "CHECK: ROOT %q = f32[4] parameter(1)");
}

// XLA:CPU's algsimp writes an update into a broadcast scalar at constant
// indices as a pad (seen in its pass dumps of an expanded scatter of one
// index); the indices are clamped as dynamic-update-slice clamps them.
TEST(AlgebraicSimplifierTest, UpdateOfABroadcastScalarAtConstantIndicesIsAPad) {
  const std::string update = R"(HloModule m
ENTRY main {
  u = f32[2,1] parameter(0)
  z = f32[] constant(0)
  b = f32[4,3] broadcast(z), dimensions={}
  i = s32[] constant(1)
  j = s32[] constant(%J)
  ROOT r = f32[4,3] dynamic-update-slice(b, u, i, j)
})";
  auto with_j = [&](const char* j) { return absl::StrReplaceAll(update, {{"%J", j}}); };
  ExpectSimplifies(with_j("2"),
                   "CHECK: ROOT {{.*}} f32[4,3] pad(f32[2,1] %u, f32[] %z), padding=1_1x2_0");
  ExpectSimplifies(with_j("5"),
                   "CHECK: ROOT {{.*}} f32[4,3] pad(f32[2,1] %u, f32[] %z), padding=1_1x2_0");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  u = f32[2,1] parameter(0)
  z = f32[] constant(0)
  b = f32[4,3] broadcast(z), dimensions={}
  i = s32[] parameter(1)
  ROOT r = f32[4,3] dynamic-update-slice(b, u, i, i)
})");
}

// --------------------------------- reduce ----------------------------------

TEST(AlgebraicSimplifierTest, ReduceOfNothingIsReshape) {
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[4,1] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=sum
})"),
                   "CHECK: ROOT {{.*}} reshape(f32[4,1] %p)");
}

// A reduce over a concatenated dimension reduces each piece and combines them
// with the reducer, left to right (a piece of one row is only reshaped; XLA's result on a
// TensorFlow detector's all-finite check over its gradients, a reduce_all of stacked flags); over
// another dimension it stays.
TEST(AlgebraicSimplifierTest, ReduceOfConcatenateCombinesThePiecesReduces) {
  const std::string hlo = WithSum(R"(ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[1,3] parameter(1)
  c = f32[4,3] parameter(2)
  cat = f32[7,3] concatenate(a, b, c), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[%R] reduce(cat, z), dimensions={%D}, to_apply=sum
})");
  auto over = [&](const char* result, const char* dims) {
    return absl::StrReplaceAll(hlo, {{"%R", result}, {"%D", dims}});
  };
  PassRun run = RunPass("algsimp", over("3", "0"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %reduce = f32[3] reduce(f32[2,3] %a
CHECK: %reshape = f32[3] reshape(f32[1,3] %b)
CHECK: %add = f32[3] add(f32[3] %reduce, f32[3] %reshape)
CHECK: %reduce.2 = f32[3] reduce(f32[4,3] %c
CHECK: ROOT {{.*}} f32[3] add(f32[3] %add, f32[3] %reduce.2)
CHECK-NOT: concatenate
)");
  ExpectSameSemantics(run, 5);
  ExpectUnchanged(over("7", "1"));
}

TEST(AlgebraicSimplifierTest, ReduceOfReduceMerges) {
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  a = f32[2,4] reduce(p, z), dimensions={1}, to_apply=sum
  ROOT r = f32[4] reduce(a, z), dimensions={0}, to_apply=sum
})"),
                   "CHECK: ROOT {{.*}} reduce(f32[2,3,4] %p, f32[] %z), dimensions={0,1}");
}

TEST(AlgebraicSimplifierTest, ReduceOfTransposeAndReshape) {
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  ROOT r = f32[3] reduce(t, z), dimensions={1}, to_apply=sum
})"),
                   "CHECK: ROOT {{.*}} reduce(f32[2,3] %p, f32[] %z), dimensions={0}");
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  t = f32[2,12] reshape(p)
  ROOT r = f32[2] reduce(t, z), dimensions={1}, to_apply=sum
})"),
                   "CHECK: ROOT {{.*}} reduce(f32[2,3,4] %p, f32[] %z), dimensions={1,2}");
}

TEST(AlgebraicSimplifierTest, ReduceOfNegateAndBroadcast) {
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  n = f32[2,3] negate(p)
  ROOT r = f32[2] reduce(n, z), dimensions={1}, to_apply=sum
})"),
                   "CHECK: reduce(f32[2,3] %p\nCHECK: ROOT {{.*}} negate(");
  ExpectSimplifies(WithSum(R"(ENTRY main {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[3] reduce(b, z), dimensions={0}, to_apply=sum
})"),
                   "CHECK: f32[] constant(2)\nCHECK: multiply(f32[3] %p");
}

TEST(AlgebraicSimplifierTest, ReduceMaxWithNegateIsNotRewritten) {
  ExpectUnchanged(R"(HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY main {
  p = f32[2,3] parameter(0)
  z = f32[] constant(-inf)
  n = f32[2,3] negate(p)
  ROOT r = f32[2] reduce(n, z), dimensions={1}, to_apply=mx
})");
}

// The variadic reduce JAX emits for argmax (argmin with `cmp`="LT",
// `init`="inf") of f32[2,5] %p over dim 1, as %am, plus `extra` lines.
std::string ArgMinMax(std::string_view cmp, std::string_view init, std::string_view extra) {
  return absl::StrCat(R"(HloModule m
mx {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
mn {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] minimum(x, y)
}
argf {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  better = pred[] compare(a, b), direction=)",
                      std::string(cmp), R"(
  nan = pred[] compare(a, a), direction=NE
  wins = pred[] or(better, nan)
  v = f32[] select(wins, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(wins, tie)
  i = s32[] select(take, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  p = f32[2,5] parameter(0)
  io = s32[2,5] iota(), iota_dimension=1
  vi = f32[] constant()",
                      std::string(init), R"()
  zi = s32[] constant(0)
  am = (f32[2], s32[2]) reduce(p, io, vi, zi), dimensions={1}, to_apply=argf
)",
                      std::string(extra), "}\n");
}

TEST(AlgebraicSimplifierTest, MaxReduceBesideArgmaxUsesItsValue) {
  PassRun run = RunPass("algsimp", ArgMinMax("GT", "-inf", R"(  c = f32[] constant(-inf)
  r = f32[2] reduce(p, c), dimensions={1}, to_apply=mx
  idx = s32[2] get-tuple-element(am), index=1
  ROOT t = (f32[2], s32[2]) tuple(r, idx)
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %am = (f32[2], s32[2]) reduce(
CHECK: f32[2] get-tuple-element((f32[2], s32[2]) %am), index=0
CHECK-NOT: to_apply=%mx
)");
  ExpectSameSemantics(run);
}

TEST(AlgebraicSimplifierTest, MinReduceBesideArgminUsesItsValue) {
  PassRun run = RunPass("algsimp", ArgMinMax("LT", "inf", R"(  c = f32[] constant(inf)
  r = f32[2] reduce(p, c), dimensions={1}, to_apply=mn
  idx = s32[2] get-tuple-element(am), index=1
  ROOT t = (f32[2], s32[2]) tuple(r, idx)
)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: f32[2] get-tuple-element((f32[2], s32[2]) %am), index=0");
  ExpectSameSemantics(run);
}

TEST(AlgebraicSimplifierTest, MaxReduceNextToArgminIsKept) {
  // Wrong direction (argmin), and a max with an init other than -inf.
  ExpectUnchanged(ArgMinMax("LT", "inf", R"(  c = f32[] constant(-inf)
  r = f32[2] reduce(p, c), dimensions={1}, to_apply=mx
  idx = s32[2] get-tuple-element(am), index=1
  ROOT t = (f32[2], s32[2]) tuple(r, idx)
)"));
  ExpectUnchanged(ArgMinMax("GT", "-inf", R"(  c = f32[] constant(0)
  r = f32[2] reduce(p, c), dimensions={1}, to_apply=mx
  idx = s32[2] get-tuple-element(am), index=1
  ROOT t = (f32[2], s32[2]) tuple(r, idx)
)"));
}

TEST(AlgebraicSimplifierTest, ArgmaxOfBroadcastConstantIsConstantAtZero) {
  std::string hlo = ArgMinMax("GT", "-inf", R"(  k = f32[] constant(3)
  kb = f32[2,5] broadcast(k), dimensions={}
  ROOT am2 = (f32[2], s32[2]) reduce(kb, io, vi, zi), dimensions={1}, to_apply=argf
)");
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2] broadcast(f32[] %k), dimensions={}
CHECK: s32[] constant(0)
CHECK: ROOT {{.*}} = (f32[2], s32[2]) tuple(
)");
  ExpectSameSemantics(run);
}

TEST(AlgebraicSimplifierTest, SunkBroadcastLeavesItsUserDead) {
  // As in XLA, the elementwise user a broadcast is sunk below is rewired but
  // stays (dead) until DCE.
  PassRun run = RunPass("algsimp", F32("  a = f32[3,4] broadcast(p), dimensions={1}\n"
                                       "  n = f32[3,4] negate(a)\n"
                                       "  ROOT r = f32[3,4] abs(n)\n"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK: %n = f32[3,4] negate(f32[3,4] %a)");
  EXPECT_CHECKS(run.after, "CHECK: negate(f32[4] %p)");
  ExpectSameSemantics(run);
}

// ----------------------------------- dot -----------------------------------

TEST(AlgebraicSimplifierTest, DotWithoutContractionIsMultiply) {
  ExpectSimplifies(R"(HloModule m
ENTRY main {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
})",
                   "CHECK: broadcast(f32[2] %a), dimensions={0}\n"
                   "CHECK: broadcast(f32[3] %b), dimensions={1}\nCHECK: ROOT {{.*}} multiply(");
}

// A dot of two (batched) vectors is a reduce of their product, summed in f32
// for bf16, as XLA:CPU makes it with dot strength reduction off; a vector
// times a matrix stays a dot there.
TEST(AlgebraicSimplifierTest, DotOfTwoVectorsIsAReduceOfTheirProduct) {
  ExpectSimplifies(
      R"(HloModule m
ENTRY main {
  a = bf16[4,8] parameter(0)
  b = bf16[8,4] parameter(1)
  ROOT d = bf16[4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})",
      "CHECK: transpose(bf16[8,4] %b), dimensions={1,0}\n"
      "CHECK: multiply(bf16[4,8] %a, bf16[4,8] %\nCHECK: convert(\n"
      "CHECK: reduce(f32[4,8] {{.*}}, dimensions={1}, to_apply=%scalar_add_computation\n"
      "CHECK: ROOT {{.*}} convert(f32[4]");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})");
}

TEST(AlgebraicSimplifierTest, DotDropsDegenerateDims) {
  ExpectSimplifies(
      R"(HloModule m
ENTRY main {
  a = f32[1,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[1,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
      "CHECK: reshape(f32[1,3] %a)\nCHECK: dot(f32[3] {{.*}}, f32[3,5] %b), "
      "lhs_contracting_dims={0}, rhs_contracting_dims={0}\nCHECK: ROOT {{.*}} reshape(");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

// ------------------------------ robustness ---------------------------------

TEST(AlgebraicSimplifierTest, KeepsInstructionsWithControlEdges) {
  ExpectUnchanged(
      F32("  z = f32[] constant(0)\n  b = f32[4] broadcast(z), dimensions={}\n"
          "  a = f32[4] add(p, b), control-predecessors={q}\n"
          "  ROOT r = f32[4] multiply(a, q)\n"));
}

TEST(AlgebraicSimplifierTest, SimplifiesCalledComputations) {
  ExpectSimplifies(R"(HloModule m
body {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] call(p), to_apply=body
  n = f32[4] negate(c)
  ROOT r = f32[4] negate(n)
})",
                   "CHECK: ROOT %c = f32[4] call(");
}

// ------------------------------ smoke corpus -------------------------------

std::vector<std::filesystem::path> SmokeModules() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HLOGYM_SOURCE_DIR) + "/datasets/smoke")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hlo" || name.find(".optimized") != std::string::npos ||
        name.find(".debuginfo") != std::string::npos) {
      continue;
    }
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(AlgebraicSimplifierCorpusTest, SmokeModulesVerifyAndShrink) {
  // Modules where XLA's rules add instructions for later passes: A - C ->
  // A + negate(C) (constant folding removes the negate), and a dot without
  // contracting dims -> multiply of two broadcasts, and softmax's
  // exp / broadcast(sum) -> exp * broadcast(1 / sum) (a constant 1, its
  // broadcast and the small divide; CSE later shares the constants).
  const std::set<std::string> may_grow = {"control_flow.hlo", "einsum.hlo", "gpt2_train.hlo"};
  auto paths = SmokeModules();
  ASSERT_FALSE(paths.empty());
  for (const auto& path : paths) {
    SCOPED_TRACE(path.string());
    auto module = LoadModule(path.string());
    ASSERT_TRUE(module.ok()) << module.status();
    const int64_t before = (*module)->instruction_count();
    auto pass = PassRegistry::Builtin().Create("algsimp");
    ASSERT_TRUE(pass.ok());
    auto changed = (*pass)->Run(**module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    absl::Status verified = VerifyModule(**module);
    EXPECT_TRUE(verified.ok()) << verified;
    const int64_t after = (*module)->instruction_count();
    if (!may_grow.contains(path.filename().string())) EXPECT_LE(after, before);
    // A second run finds nothing left to do.
    auto again = (*pass)->Run(**module);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(*again) << "not at a fixed point";
  }
}

TEST(AlgebraicSimplifierCorpusTest, SmokeModulesStayEquivalent) {
  for (const auto& path : SmokeModules()) {
    SCOPED_TRACE(path.string());
    auto original = LoadModule(path.string());
    ASSERT_TRUE(original.ok()) << original.status();
    std::unique_ptr<Module> simplified = (*original)->Clone();
    auto pass = PassRegistry::Builtin().Create("algsimp");
    ASSERT_TRUE(pass.ok());
    ASSERT_TRUE((*pass)->Run(*simplified).ok());
    EquivalenceOptions options;
    options.trials = 2;
    auto result = CheckEquivalent(**original, *simplified, options);
    if (!result.ok()) {
      // Modules the evaluator cannot run are skipped, not failed.
      GTEST_LOG_(INFO) << "skipped: " << result.status();
      continue;
    }
    EXPECT_TRUE(result->equivalent) << result->message;
  }
}

}  // namespace
}  // namespace hlogym::testing
