// eigh_expander: custom-call "Eigh" as a call of a parallel Jacobi
// eigendecomposition, and the reference evaluator's meaning of that call.
#include <cmath>
#include <string>
#include <vector>

#include "eval/equivalence.h"
#include "eval/eval_test_util.h"
#include "eval/evaluator.h"
#include "gmock/gmock.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// A module whose root is one Eigh custom call of a parameter.
std::string EighModule(std::string_view type, std::vector<int64_t> dims,
                       std::string_view config = "1,1,100,1e-06") {
  std::string a_dims, w_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    a_dims += (i ? "," : "") + std::to_string(dims[i]);
    if (i + 1 < dims.size()) w_dims += (i ? "," : "") + std::to_string(dims[i]);
  }
  const std::string a = std::string(type) + "[" + a_dims + "]";
  const std::string w = std::string(type) + "[" + w_dims + "]";
  return "HloModule m\nENTRY main {\n  a = " + a + " parameter(0)\n  ROOT e = (" + a + ", " + w +
         ") custom-call(a), custom_call_target=\"Eigh\", backend_config=\"" + std::string(config) +
         "\"\n}\n";
}

// Checks that `result` = (v, w) is an eigendecomposition of the matrices of
// `a` (its `lower` triangle mirrored): A v = v diag(w), v^T v = I, w
// ascending when `sorted`, and the sign convention (max + min >= 0 per
// column, up to rounding).
void ExpectEigenPairs(const Literal& a, const Literal& result, bool lower, bool sorted,
                      double tol) {
  ASSERT_TRUE(result.shape().IsTuple());
  ASSERT_EQ(result.tuple_elements().size(), 2u);
  const Literal& v = result.tuple_elements()[0];
  const Literal& w = result.tuple_elements()[1];
  const auto& dims = a.shape().dimensions();
  const int64_t n = dims.back();
  ASSERT_GE(dims.size(), 2u);
  const int64_t batch = n == 0 ? 0 : a.element_count() / (n * n);
  ASSERT_EQ(v.element_count(), a.element_count());
  ASSERT_EQ(w.element_count(), batch * n);
  for (int64_t b = 0; b < batch; ++b) {
    auto m = [&](int64_t i, int64_t j) {
      const int64_t hi = std::max(i, j), lo = std::min(i, j);
      return a.GetAsDouble(b * n * n + (lower ? hi * n + lo : lo * n + hi));
    };
    auto vec = [&](int64_t i, int64_t j) { return v.GetAsDouble(b * n * n + i * n + j); };
    auto val = [&](int64_t j) { return w.GetAsDouble(b * n + j); };
    double scale = 1;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) scale = std::max(scale, std::abs(m(i, j)));
    }
    for (int64_t j = 0; j < n; ++j) {
      double largest = -1e300, smallest = 1e300;
      for (int64_t i = 0; i < n; ++i) {
        double av = 0;
        for (int64_t l = 0; l < n; ++l) av += m(i, l) * vec(l, j);
        EXPECT_NEAR(av, val(j) * vec(i, j), tol * scale)
            << "batch " << b << " A v, row " << i << " col " << j;
        largest = std::max(largest, vec(i, j));
        smallest = std::min(smallest, vec(i, j));
      }
      EXPECT_GE(largest + smallest, -tol) << "sign convention, batch " << b << " col " << j;
      for (int64_t k = 0; k < n; ++k) {
        double dot = 0;
        for (int64_t i = 0; i < n; ++i) dot += vec(i, j) * vec(i, k);
        EXPECT_NEAR(dot, j == k ? 1.0 : 0.0, tol) << "v^T v, batch " << b << " " << j << "," << k;
      }
      if (sorted && j > 0) EXPECT_LE(val(j - 1), val(j) + tol * scale) << "order, batch " << b;
    }
  }
}

// Evaluates `module` on seeded random inputs and checks the eigenpairs.
void ExpectEigenPairsOnRandomInput(const Module& module, bool lower, bool sorted, double tol,
                                   uint64_t seed = 1) {
  std::vector<Literal> args = *MakeRandomArguments(module, seed);
  ASSERT_EQ(args.size(), 1u);
  auto result = Evaluate(module, args);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectEigenPairs(args[0], *result, lower, sorted, tol);
}

// --- the evaluator -------------------------------------------------------

TEST(EighEvaluatorTest, TwoByTwoByHand) {
  // [[1, 2], [2, 4]]: eigenvalues 0 and 5, eigenvectors (2, -1)/sqrt(5) and
  // (1, 2)/sqrt(5) (signs: a largest-magnitude component is positive). The
  // triangle not read holds 99.
  const double r = 1 / std::sqrt(5.0);
  const std::vector<double> v = {2 * r, r, -r, 2 * r};
  for (bool lower : {true, false}) {
    const std::string a = lower ? "{{1, 99}, {2, 4}}" : "{{1, 2}, {99, 4}}";
    const std::string text = "HloModule m\nENTRY e {\n  a = f64[2,2] constant(" + a +
                             ")\n  ROOT e = (f64[2,2], f64[2]) custom-call(a), "
                             "custom_call_target=\"Eigh\", backend_config=\"" +
                             (lower ? "1" : "0") + ",1,100,1e-06\"\n}\n";
    auto result = EvalText(text);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_THAT(Values(result->tuple_elements()[1]),
                ::testing::Pointwise(::testing::DoubleNear(1e-12), {0.0, 5.0}));
    EXPECT_THAT(Values(result->tuple_elements()[0]),
                ::testing::Pointwise(::testing::DoubleNear(1e-12), v));
  }
}

TEST(EighEvaluatorTest, RandomBatchedIsAnEigendecomposition) {
  for (bool lower : {true, false}) {
    auto module =
        ParseModule(EighModule("f32", {3, 5, 5}, lower ? "1,1,100,1e-6" : "0,1,100,1e-6"));
    ASSERT_TRUE(module.ok()) << module.status();
    ExpectEigenPairsOnRandomInput(**module, lower, /*sorted=*/true, 1e-5);
  }
  auto module = ParseModule(EighModule("f64", {2, 7, 7}));
  ASSERT_TRUE(module.ok()) << module.status();
  ExpectEigenPairsOnRandomInput(**module, true, true, 1e-12);
}

TEST(EighEvaluatorTest, WrongShapesAreAnErrorNamingTheInstruction) {
  for (const char* text :
       {"HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT bad_eigh = (f32[2,3], "
        "f32[2]) custom-call(a), custom_call_target=\"Eigh\", backend_config=\"1,1,100,1e-6\"\n}\n",
        "HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  ROOT bad_eigh = (f32[3,3], "
        "f32[2]) custom-call(a), custom_call_target=\"Eigh\", "
        "backend_config=\"1,1,100,1e-6\"\n}\n"}) {
    auto module = ParseModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto result = Evaluate(**module, *MakeRandomArguments(**module, 0));
    ASSERT_FALSE(result.ok());
    EXPECT_THAT(std::string(result.status().message()), ::testing::HasSubstr("bad_eigh"));
  }
}

TEST(EighEvaluatorTest, ComplexIsOpaque) {
  auto module = ParseModule(R"(HloModule m
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT e = (c64[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(Evaluate(**module, *MakeRandomArguments(**module, 0)).ok());
}

// --- the expansion -------------------------------------------------------

TEST(EighExpanderTest, ExpandsIntoJacobiSweeps) {
  PassRun run = RunPass("eigh_expander", EighModule("f32", {4, 4}));
  EXPECT_TRUE(run.changed);
  // Callees first: the convergence test, a round (inside a counted loop of
  // 2*2-1 = 3 rounds), the sweep loop, the sort comparator, the expansion.
  EXPECT_CHECKS(run.after, R"(
CHECK: %eigh_sweeps_cond
CHECK: constant(100)
CHECK: compare({{.*}}), direction=LT
CHECK: reduce({{.*}}), dimensions={0,1}, to_apply=%eigh.add
CHECK: constant(1e-12)
CHECK: ROOT %{{.*}} = pred[] and(
CHECK: %while_cond
CHECK: constant(3)
CHECK: %while_body
CHECK: direction=GE
CHECK: rsqrt(
CHECK: f32[2,2] concatenate(
CHECK: %eigh_sweeps_body
CHECK: while({{.*}}), condition=%while_cond, body=%while_body
CHECK: %eigh.compare_lt
CHECK: %xla.Eigh_f32_4_4_ (a.1: f32[4,4]) -> (f32[4,4], f32[4])
CHECK: transpose({{.*}}), dimensions={1,0}
CHECK: divide(
CHECK: f32[2,2] slice({{.*}}), slice={[2:4], [2:4]}
CHECK: while({{.*}}), condition=%eigh_sweeps_cond, body=%eigh_sweeps_body
CHECK: f32[4] concatenate(
CHECK: sort({{.*}}), dimensions={1}, to_apply=%eigh.compare_lt
CHECK: ROOT {{.*}} tuple(
CHECK: ENTRY
CHECK: ROOT %{{.*}} = (f32[4,4], f32[4]) call(f32[4,4] %a), to_apply=%xla.Eigh_f32_4_4_
CHECK-NOT: custom-call(
)");
  ExpectSameSemantics(run);
  ExpectEigenPairsOnRandomInput(*run.module, true, true, 1e-4);
}

TEST(EighExpanderTest, MatchesTheEvaluatorForSeveralSizes) {
  for (int64_t n : {1, 2, 3, 5, 6, 8}) {
    SCOPED_TRACE(n);
    PassRun run = RunPass("eigh_expander", EighModule("f32", {n, n}));
    EXPECT_TRUE(run.changed);
    ExpectSameSemantics(run);
    ExpectEigenPairsOnRandomInput(*run.module, true, true, 1e-4);
  }
}

TEST(EighExpanderTest, BatchedOddUpper) {
  PassRun run = RunPass("eigh_expander", EighModule("f32", {2, 3, 5, 5}, "0,1,100,1e-6"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %xla.Eigh_f32_2_3_5_5_
CHECK: f32[2,3,3,3] pad(
CHECK: transpose({{.*}}), dimensions={0,1,3,2}
CHECK: call(f32[2,3,5,5] %a)
)");
  ExpectSameSemantics(run, /*trials=*/2);
  ExpectEigenPairsOnRandomInput(*run.module, false, true, 1e-4);
}

TEST(EighExpanderTest, F64IsAccurate) {
  // XLA's rotation skips off-diagonal elements below 0.1 * f32 epsilon
  // (relative) for f64 too, so f64 results are good to about 1e-8 whatever
  // the tol.
  PassRun run = RunPass("eigh_expander", EighModule("f64", {2, 7, 7}, "1,1,100,1e-10"));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
  ExpectEigenPairsOnRandomInput(*run.module, true, true, 1e-7);
}

TEST(EighExpanderTest, UnsortedKeepsTheJacobiOrder) {
  PassRun run = RunPass("eigh_expander", EighModule("f32", {2, 6, 6}, "1,0,100,1e-6"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, "CHECK-NOT: sort(");
  ExpectEigenPairsOnRandomInput(*run.module, true, /*sorted=*/false, 1e-4);
}

TEST(EighExpanderTest, JaxLayoutsAndUsers) {
  PassRun run = RunPass(
      "eigh_expander",
      R"(HloModule jit_eigh, entry_computation_layout={(f32[4,4]{1,0})->(f32[4]{0}, f32[4,4]{1,0})}
ENTRY main.5 {
  Arg_0.1 = f32[4,4]{1,0} parameter(0)
  custom-call.2 = (f32[4,4]{1,0}, f32[4]{0}) custom-call(Arg_0.1), custom_call_target="Eigh", api_version=API_VERSION_ORIGINAL, backend_config="1,1,100,1e-06"
  get-tuple-element.3 = f32[4,4]{1,0} get-tuple-element(custom-call.2), index=0
  get-tuple-element.4 = f32[4]{0} get-tuple-element(custom-call.2), index=1
  ROOT tuple.5 = (f32[4]{0}, f32[4,4]{1,0}) tuple(get-tuple-element.4, get-tuple-element.3)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: (f32[4,4]{1,0}, f32[4]{0}) call(f32[4,4]{1,0} %Arg_0.1), to_apply=%xla.Eigh_f32_4_4_
)");
  ExpectSameSemantics(run);
}

TEST(EighExpanderTest, DiagonalAndZeroMatrices) {
  PassRun run = RunPass("eigh_expander", R"(HloModule m
ENTRY main {
  d = f32[2,3,3] constant({{{3, 0, 0}, {0, 1, 0}, {0, 0, 2}}, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}})
  ROOT e = (f32[2,3,3], f32[2,3]) custom-call(d), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
}
)");
  EXPECT_TRUE(run.changed);
  auto result = Evaluate(*run.module, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(result->tuple_elements()[1]),
              ::testing::Pointwise(::testing::FloatNear(1e-6), {1.0, 2.0, 3.0, 0.0, 0.0, 0.0}));
  // Batch 0: the permutation sorting the diagonal; batch 1: the identity.
  EXPECT_THAT(Values(result->tuple_elements()[0]),
              ::testing::Pointwise(::testing::FloatNear(1e-6),
                                   {0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,  //
                                    1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0}));
  ExpectSameSemantics(run, 1);
}

TEST(EighExpanderTest, SharesOneComputationPerShapeAndConfig) {
  PassRun run = RunPass("eigh_expander", R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  e1 = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
  v1 = f32[3,3] get-tuple-element(e1), index=0
  e2 = (f32[3,3], f32[3]) custom-call(v1), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
  e3 = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="0,1,100,1e-06"
  ROOT t = ((f32[3,3], f32[3]), (f32[3,3], f32[3])) tuple(e2, e3)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: call(f32[3,3] %a), to_apply=%xla.Eigh_f32_3_3_
CHECK: call(f32[3,3] %{{.*}}), to_apply=%xla.Eigh_f32_3_3_{{$|,}}
CHECK: call(f32[3,3] %a), to_apply=%xla.Eigh_f32_3_3_.
)");
  ExpectSameSemantics(run, 1);
}

TEST(EighExpanderTest, NoEighNoChange) {
  PassRun run = RunPass("eigh_expander", R"(HloModule m
ENTRY main {
  a = f32[2,2] parameter(0)
  ROOT c = (f32[2,2], f32[2]) custom-call(a), custom_call_target="Qr"
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(EighExpanderTest, ComplexAndNarrowTypesStay) {
  for (const char* text : {
           R"(HloModule m
ENTRY main {
  a = c64[3,3] parameter(0)
  ROOT e = (c64[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})",
           R"(HloModule m
ENTRY main {
  a = bf16[3,3] parameter(0)
  ROOT e = (bf16[3,3], bf16[3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})"}) {
    PassRun run = RunPass("eigh_expander", text);
    EXPECT_FALSE(run.changed);
  }
}

TEST(EighExpanderTest, MalformedCallsAreErrorsNamingTheInstruction) {
  for (const char* text : {
           R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  ROOT bad_eigh = (f32[2,3], f32[2]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})",
           R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  ROOT bad_eigh = (f32[3,3], f32[3,3]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})",
           R"(HloModule m
ENTRY main {
  a = f32[3,3] parameter(0)
  ROOT bad_eigh = (f32[3,3], f32[3]) custom-call(a), custom_call_target="Eigh", backend_config="lower"
})",
           R"(HloModule m
ENTRY main {
  a = f32[3] parameter(0)
  ROOT bad_eigh = (f32[3], f32[]) custom-call(a), custom_call_target="Eigh", backend_config="1,1,100,1e-06"
})"}) {
    auto module = ParseModule(text, "test.hlo");
    ASSERT_TRUE(module.ok()) << module.status();
    auto pass = PassRegistry::Builtin().Create("eigh_expander");
    ASSERT_TRUE(pass.ok());
    auto changed = (*pass)->Run(**module);
    ASSERT_FALSE(changed.ok()) << text;
    EXPECT_THAT(std::string(changed.status().message()), ::testing::HasSubstr("bad_eigh"));
  }
}

}  // namespace
}  // namespace hlogym::testing
