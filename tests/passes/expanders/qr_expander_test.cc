// qr_expander: the Qr / ProductOfElementaryHouseholderReflectors custom calls
// as calls of the blocked Householder algorithm; and the reference
// evaluator's meaning of those custom calls, which the expansion must match.
#include <gmock/gmock.h>

#include <cmath>
#include <string>
#include <vector>

#include "eval/eval_test_util.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

using ::testing::HasSubstr;

std::string Dims(const std::string& batch, int64_t rows, int64_t cols) {
  return (batch.empty() ? "" : batch + ",") + std::to_string(rows) + "," + std::to_string(cols);
}

// a -> (a', taus, q) where a' and taus come from Qr and q from the product of
// the reflectors in the first min(m, n) columns of a' (what JAX's reduced
// jnp.linalg.qr does).
std::string QrModule(const std::string& type, const std::string& batch, int64_t m, int64_t n) {
  const int64_t p = std::min(m, n);
  const std::string a = type + "[" + Dims(batch, m, n) + "]";
  const std::string taus =
      type + "[" + (batch.empty() ? "" : batch + ",") + std::to_string(p) + "]";
  const std::string square = type + "[" + Dims(batch, m, p) + "]";
  std::string slice = "[0:" + std::to_string(m) + "], [0:" + std::to_string(p) + "]";
  if (!batch.empty()) {
    std::string prefix;
    size_t start = 0;
    while (start <= batch.size()) {
      size_t comma = batch.find(',', start);
      if (comma == std::string::npos) comma = batch.size();
      prefix += "[0:" + batch.substr(start, comma - start) + "], ";
      start = comma + 1;
    }
    slice = prefix + slice;
  }
  return "HloModule m\nENTRY main {\n  a = " + a + " parameter(0)\n" + "  qr = (" + a + ", " +
         taus + ") custom-call(a), custom_call_target=\"Qr\"\n" + "  packed = " + a +
         " get-tuple-element(qr), index=0\n" + "  taus = " + taus +
         " get-tuple-element(qr), index=1\n" + "  left = " + square + " slice(packed), slice={" +
         slice + "}\n" + "  q = " + square +
         " custom-call(left, taus), "
         "custom_call_target=\"ProductOfElementaryHouseholderReflectors\"\n" +
         "  ROOT t = (" + a + ", " + taus + ", " + square + ") tuple(packed, taus, q)\n}\n";
}

// Checks Q^T Q = I and Q R = A for every matrix of a batch, with R the upper
// triangle of the packed result.
void ExpectFactorization(const std::vector<double>& a, const std::vector<double>& packed,
                         const std::vector<double>& q, int64_t batch, int64_t m, int64_t n,
                         double tolerance) {
  const int64_t p = std::min(m, n);
  ASSERT_EQ(static_cast<int64_t>(a.size()), batch * m * n);
  ASSERT_EQ(static_cast<int64_t>(packed.size()), batch * m * n);
  ASSERT_EQ(static_cast<int64_t>(q.size()), batch * m * p);
  for (int64_t b = 0; b < batch; ++b) {
    const double* A = a.data() + b * m * n;
    const double* P = packed.data() + b * m * n;
    const double* Q = q.data() + b * m * p;
    for (int64_t i = 0; i < p; ++i) {
      for (int64_t j = 0; j < p; ++j) {
        double dot = 0;
        for (int64_t r = 0; r < m; ++r) dot += Q[r * p + i] * Q[r * p + j];
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, tolerance) << "Q^T Q at " << b << "," << i << "," << j;
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t r = 0; r <= std::min(j, p - 1); ++r) sum += Q[i * p + r] * P[r * n + j];
        EXPECT_NEAR(sum, A[i * n + j], tolerance) << "QR at " << b << "," << i << "," << j;
      }
    }
  }
}

// Deterministic values in [-1, 1].
std::vector<double> Pseudorandom(int64_t count, int seed) {
  std::vector<double> values(count);
  uint32_t state = 12345u + 7919u * seed;
  for (auto& v : values) {
    state = state * 1664525u + 1013904223u;
    v = (static_cast<double>(state >> 8) / static_cast<double>(1u << 24)) * 2.0 - 1.0;
  }
  return values;
}

void ExpectEvaluatorFactors(const std::string& type, const std::string& batch_text, int64_t batch,
                            int64_t m, int64_t n, double tolerance) {
  const std::string text = QrModule(type, batch_text, m, n);
  const std::vector<double> a = Pseudorandom(batch * m * n, static_cast<int>(m * 10 + n));
  const std::string shape = type + "[" + Dims(batch_text, m, n) + "]";
  const std::vector<Literal> args = {MakeLiteral(shape, a)};
  auto result = EvalText(text, args);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const std::vector<double> packed = Values(result->tuple_elements()[0]);
  const std::vector<double> taus = Values(result->tuple_elements()[1]);
  const std::vector<double> q = Values(result->tuple_elements()[2]);
  ExpectFactorization(a, packed, q, batch, m, n, tolerance);
  // LAPACK's taus: 0 or in [1, 2].
  for (double tau : taus) {
    EXPECT_TRUE(tau == 0.0 || (tau >= 1.0 - 1e-6 && tau <= 2.0 + 1e-6)) << tau;
  }
}

// --- the evaluator's meaning of the custom calls ------------------------------

// [[3, 1], [4, 2]]: alpha = 3, |x| = 5, so beta = -5, tau = 8/5,
// v = (1, 4 / (3 + 5)); H = [[-0.6, -0.8], [-0.8, 0.6]] maps column 1 to
// (-2.2, 0.4), whose last element has nothing below it (tau = 0).
TEST(QrCustomCallTest, HandCheckedTwoByTwo) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f64[2,2] constant({{3, 1}, {4, 2}})
  qr = (f64[2,2], f64[2]) custom-call(a), custom_call_target="Qr"
  packed = f64[2,2] get-tuple-element(qr), index=0
  taus = f64[2] get-tuple-element(qr), index=1
  q = f64[2,2] custom-call(packed, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = (f64[2,2], f64[2], f64[2,2]) tuple(packed, taus, q)
})";
  EXPECT_THAT(EvalValues(text, {}, 0),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), {-5.0, -2.2, 0.5, 0.4}));
  EXPECT_THAT(EvalValues(text, {}, 1),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), {1.6, 0.0}));
  EXPECT_THAT(EvalValues(text, {}, 2),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), {-0.6, -0.8, -0.8, 0.6}));
}

// A zero column below the diagonal gives tau = 0 and keeps alpha (dlarfg).
TEST(QrCustomCallTest, ZeroColumnKeepsItsSign) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[3,2] constant({{2, 1}, {0, -3}, {0, 4}})
  ROOT qr = (f32[3,2], f32[2]) custom-call(a), custom_call_target="Qr"
})";
  // Column 1 after H_0 = I: (1, -3, 4) -> beta = +5 (alpha < 0), tau =
  // (5 + 3) / 5, v = (., 1, 4 / (-3 - 5)).
  EXPECT_THAT(EvalValues(text, {}, 0),
              ::testing::Pointwise(::testing::FloatNear(1e-6), {2.0, 1.0, 0.0, 5.0, 0.0, -0.5}));
  EXPECT_THAT(EvalValues(text, {}, 1),
              ::testing::Pointwise(::testing::FloatNear(1e-6), {0.0, 1.6}));
}

TEST(QrCustomCallTest, SquareTallWideAndBatchedFactorizations) {
  ExpectEvaluatorFactors("f64", "", 1, 4, 4, 1e-12);
  ExpectEvaluatorFactors("f64", "", 1, 6, 3, 1e-12);
  ExpectEvaluatorFactors("f64", "", 1, 3, 5, 1e-12);
  ExpectEvaluatorFactors("f32", "2,3", 6, 4, 3, 1e-5);
}

// Fewer reflectors than columns: the later columns of Q are the identity's
// columns under the reflectors (orgqr with k < n).
TEST(QrCustomCallTest, ProductWithFewerReflectorsThanColumns) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f64[2,2] constant({{-5, 7}, {0.5, 9}})
  taus = f64[1] constant({1.6})
  ROOT q = f64[2,2] custom-call(a, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
})";
  EXPECT_THAT(EvalValues(text),
              ::testing::Pointwise(::testing::DoubleNear(1e-12), {-0.6, -0.8, -0.8, 0.6}));
}

TEST(QrCustomCallTest, BadShapesAreErrorsComplexStaysOpaque) {
  for (const char* text : {
           R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT qr = (f32[4], f32[1]) custom-call(a), custom_call_target="Qr"
})",
           R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT qr = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Qr"
})",
           R"(HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  t = f32[3] parameter(1)
  ROOT q = f32[3,4] custom-call(a, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
})"}) {
    auto module = ParseModule(text, "bad.hlo");
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args;
    for (const auto& p : (*module)->entry_computation()->parameters()) {
      args.emplace_back(p->shape());
    }
    auto result = Evaluate(**module, args);
    ASSERT_FALSE(result.ok()) << text;
    const std::string message(result.status().message());
    EXPECT_THAT(message, HasSubstr("custom-call"));
    EXPECT_THAT(message, ::testing::AnyOf(HasSubstr("Qr"), HasSubstr("Householder")));
  }
  auto complex = EvalText(R"(HloModule m
ENTRY e {
  a = c64[2,2] constant({{(1,0), (2,0)}, {(3,0), (4,1)}})
  ROOT qr = (c64[2,2], c64[2]) custom-call(a), custom_call_target="Qr"
})");
  EXPECT_TRUE(complex.ok()) << complex.status().message();
}

// --- the expansion --------------------------------------------------------------

TEST(QrExpanderTest, QrBecomesACallOfLoops) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  ROOT qr = (f32[4,3], f32[3]) custom-call(a), custom_call_target="Qr"
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: while_body
CHECK: dynamic-slice(
CHECK: reduce(
CHECK: sqrt(
CHECK: dot(
CHECK: dynamic-update-slice(
CHECK: %xla.Qr_f32_4_3_
CHECK: f32[4,3] slice(
CHECK: while(
CHECK: f32[4,3] dynamic-update-slice(
CHECK: ROOT {{.*}} = (f32[4,3], f32[3]) tuple(
CHECK: ENTRY
CHECK: ROOT %{{.*}} = (f32[4,3], f32[3]) call(f32[4,3] %a), to_apply=%xla.Qr_f32_4_3_
CHECK-NOT: custom-call(
)");
  ExpectSameSemantics(run);
}

// The lower-triangle masks in the form of XLA's builder library (read from the pinned XLA's dump
// of a 6 x 6 QR): vector iotas, the diagonal added to the rows' (here -1, strictly lower), both
// broadcast over the matrix and compared. In hlogym's earlier form (matrix iotas) the default
// pipeline ended one instruction below X on QR's product of reflectors.
TEST(QrExpanderTest, MasksHaveXlasBuilderForm) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  ROOT qr = (f32[4,3], f32[3]) custom-call(a), custom_call_target="Qr"
}
)");
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.Qr_f32_4_3_
CHECK: s32[4] iota(), iota_dimension=0
CHECK-NEXT: s32[] constant(-1)
CHECK-NEXT: s32[4] broadcast(
CHECK-NEXT: s32[4] add(
CHECK-NEXT: s32[4,3] broadcast(s32[4] %{{.*}}), dimensions={0}
CHECK-NEXT: s32[3] iota(), iota_dimension=0
CHECK-NEXT: s32[4,3] broadcast(s32[3] %{{.*}}), dimensions={1}
CHECK-NEXT: pred[4,3] compare(s32[4,3] %{{.*}}, s32[4,3] %{{.*}}), direction=GE
)");
}

TEST(QrExpanderTest, ProductBecomesACall) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  t = f32[2] parameter(1)
  ROOT q = f32[4,3] custom-call(a, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.ProductOfElementaryHouseholderReflectors_f32_4_3__f32_2_
CHECK: f32[4,2] slice(
CHECK: f32[2] slice(
CHECK: while(
CHECK: f32[2,3] dot(
CHECK: f32[4,3] dynamic-update-slice(
CHECK: ENTRY
CHECK: call(f32[4,3] %a, f32[2] %t), to_apply=%xla.ProductOfElementaryHouseholderReflectors_f32_4_3__f32_2_
CHECK-NOT: custom-call(
)");
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, SquareIsEquivalent) {
  PassRun run = RunPass("qr_expander", QrModule("f32", "", 4, 4));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, TallIsEquivalent) {
  PassRun run = RunPass("qr_expander", QrModule("f32", "", 7, 3));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, WideIsEquivalent) {
  PassRun run = RunPass("qr_expander", QrModule("f32", "", 3, 6));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.Qr_f32_3_6_
CHECK: f32[3,3] slice(f32[3,6] {{.*}}), slice={[0:3], [0:3]}
CHECK: while(
CHECK: while(
CHECK: f32[3,6] dynamic-update-slice(
CHECK: f32[3,3] slice(f32[3,6] {{.*}}), slice={[0:3], [3:6]}
CHECK: f32[3,3] dot(
CHECK: f32[3,3] add(
CHECK: f32[3,6] dynamic-update-slice(
CHECK: ROOT {{.*}} tuple(
)");
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, BatchedIsEquivalent) {
  PassRun run = RunPass("qr_expander", QrModule("f32", "2,2", 5, 3));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.Qr_f32_2_2_5_3_
CHECK: %xla.ProductOfElementaryHouseholderReflectors_f32_2_2_5_3__f32_2_2_3_
)");
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, F64IsEquivalent) {
  PassRun run = RunPass("qr_expander", QrModule("f64", "3", 5, 5));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
}

// Columns already zero below the diagonal take the tau = 0 branch (beta =
// alpha, v = e_j); the identity has only those.
TEST(QrExpanderTest, ZeroColumnsMatchTheEvaluator) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[3,2] constant({{2, 1}, {0, -3}, {0, 4}})
  qr = (f32[3,2], f32[2]) custom-call(a), custom_call_target="Qr"
  i = f32[3,3] constant({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}})
  qi = (f32[3,3], f32[3]) custom-call(i), custom_call_target="Qr"
  ROOT t = ((f32[3,2], f32[2]), (f32[3,3], f32[3])) tuple(qr, qi)
}
)");
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run, /*trials=*/1);
  auto result = Evaluate(*run.module, {});
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_THAT(Values(result->tuple_elements()[0].tuple_elements()[0]),
              ::testing::Pointwise(::testing::FloatNear(1e-6), {2.0, 1.0, 0.0, 5.0, 0.0, -0.5}));
  EXPECT_THAT(Values(result->tuple_elements()[0].tuple_elements()[1]),
              ::testing::Pointwise(::testing::FloatNear(1e-6), {0.0, 1.6}));
  EXPECT_THAT(Values(result->tuple_elements()[1].tuple_elements()[1]),
              ::testing::ElementsAre(0.0, 0.0, 0.0));
}

// The expanded module itself factors: Q^T Q = I and Q R = A.
TEST(QrExpanderTest, ExpansionFactorsBatchedTallMatrices) {
  PassRun run = RunPass("qr_expander", QrModule("f64", "2", 6, 4));
  EXPECT_TRUE(run.changed);
  const std::vector<double> a = Pseudorandom(2 * 6 * 4, 3);
  auto result = Evaluate(*run.module, {MakeLiteral("f64[2,6,4]", a)});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ExpectFactorization(a, Values(result->tuple_elements()[0]), Values(result->tuple_elements()[2]),
                      2, 6, 4, 1e-12);
}

TEST(QrExpanderTest, TwoBlocksUpdateTheTrailingColumns) {
  PassRun run = RunPass("qr_expander", QrModule("f32", "", 131, 130));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.Qr_f32_131_130_
CHECK: f32[131,128] slice(
CHECK: f32[131,2] slice(
CHECK: f32[128,2] dot(
CHECK: f32[131,130] dynamic-update-slice(
CHECK: f32[3,2] slice(
CHECK: %xla.ProductOfElementaryHouseholderReflectors_f32_131_130__f32_130_
CHECK: f32[3,2] slice(
CHECK: f32[131,128] slice(
)");
  ExpectSameSemantics(run, /*trials=*/1);
}

TEST(QrExpanderTest, SharesOneComputationPerShape) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  b = f32[3,3] parameter(1)
  q1 = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Qr"
  q2 = (f32[3,3], f32[3]) custom-call(b), custom_call_target="Qr"
  ROOT t = ((f32[3,3], f32[3]), (f32[3,3], f32[3])) tuple(q1, q2)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: call(f32[3,3] %a), to_apply=%xla.Qr_f32_3_3_
CHECK: call(f32[3,3] %b), to_apply=%xla.Qr_f32_3_3_
)");
  EXPECT_EQ(run.after.find("xla.Qr_f32_3_3_.1"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(QrExpanderTest, NoQrNoChange) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  ROOT c = f32[2,2] custom-call(a), custom_call_target="SomethingElse"
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(QrExpanderTest, ComplexStaysUnchanged) {
  PassRun run = RunPass("qr_expander", R"(HloModule m
ENTRY main {
  a = c64[3,2] parameter(0)
  qr = (c64[3,2], c64[2]) custom-call(a), custom_call_target="Qr"
  p = c64[3,2] get-tuple-element(qr), index=0
  t = c64[2] get-tuple-element(qr), index=1
  ROOT q = c64[3,2] custom-call(p, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(QrExpanderTest, BadShapesAreErrorsNamingTheInstruction) {
  for (const char* text : {
           R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  ROOT bad_qr = (f32[4], f32[1]) custom-call(a), custom_call_target="Qr"
})",
           R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  ROOT bad_qr = (f32[4,3], f32[4]) custom-call(a), custom_call_target="Qr"
})",
           R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  ROOT bad_qr = f32[4,3] custom-call(a), custom_call_target="Qr"
})",
           R"(HloModule m
ENTRY main {
  a = f32[3,4] parameter(0)
  t = f32[3] parameter(1)
  ROOT bad_qr = f32[3,4] custom-call(a, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
})",
           R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  t = f64[3] parameter(1)
  ROOT bad_qr = f32[4,3] custom-call(a, t), custom_call_target="ProductOfElementaryHouseholderReflectors"
})",
           R"(HloModule m
ENTRY main {
  a = f32[4,3] parameter(0)
  ROOT bad_qr = f32[4,3] custom-call(a), custom_call_target="ProductOfElementaryHouseholderReflectors"
})"}) {
    auto module = ParseModule(text, "bad.hlo");
    ASSERT_TRUE(module.ok()) << module.status().message();
    auto pass = PassRegistry::Builtin().Create("qr_expander");
    ASSERT_TRUE(pass.ok());
    auto changed = (*pass)->Run(**module);
    ASSERT_FALSE(changed.ok()) << text;
    EXPECT_THAT(std::string(changed.status().message()), HasSubstr("bad_qr")) << text;
  }
}

}  // namespace
}  // namespace hlogym::testing
