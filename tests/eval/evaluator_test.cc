// Per-opcode evaluator tests: HLO text in, hand-computed values out.
#include "eval/evaluator.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "eval/equivalence.h"
#include "eval/value.h"
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using ::testing::DoubleNear;
using ::testing::Each;
using ::testing::ElementsAre;
using testing::EvalText;
using testing::EvalValues;
using testing::MakeLiteral;
using ::testing::Pointwise;

const double kInf = std::numeric_limits<double>::infinity();

std::string Unary(const std::string& type, const std::string& op, const std::string& values) {
  return absl::StrCat("HloModule m\nENTRY e {\n  c = ", type, " constant(", values,
                      ")\n  ROOT r = ", type, " ", op, "(c)\n}\n");
}
std::string Binary(const std::string& type, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& out_type = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, " constant(", a, ")\n  b = ", type,
                      " constant(", b, ")\n  ROOT r = ", out_type.empty() ? type : out_type, " ",
                      op, "(a, b)\n}\n");
}

TEST(EvaluatorElementwise, FloatArithmetic) {
  EXPECT_THAT(EvalValues(Binary("f32[4]", "add", "{1, 2, 3, 4}", "{10, 20, 30, 40}")),
              ElementsAre(11, 22, 33, 44));
  EXPECT_THAT(EvalValues(Binary("f32[3]", "subtract", "{1, 2, 3}", "{3, 2, 1}")),
              ElementsAre(-2, 0, 2));
  EXPECT_THAT(EvalValues(Binary("f32[3]", "multiply", "{1, -2, 3}", "{3, 2, 0.5}")),
              ElementsAre(3, -4, 1.5));
  EXPECT_THAT(EvalValues(Binary("f32[2]", "divide", "{1, -3}", "{4, 2}")), ElementsAre(0.25, -1.5));
  EXPECT_THAT(EvalValues(Binary("f32[2]", "remainder", "{7, -7}", "{3, 3}")), ElementsAre(1, -1));
  EXPECT_THAT(EvalValues(Binary("f32[2]", "power", "{2, 9}", "{3, 0.5}")), ElementsAre(8, 3));
  EXPECT_THAT(EvalValues(Binary("f64[1]", "atan2", "{1}", "{1}")),
              Pointwise(DoubleNear(1e-12), {M_PI / 4}));
}

TEST(EvaluatorElementwise, MaxMinPropagateNan) {
  auto max = EvalValues(Binary("f32[3]", "maximum", "{1, nan, 3}", "{2, 1, nan}"));
  ASSERT_EQ(max.size(), 3u);
  EXPECT_EQ(max[0], 2);
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_TRUE(std::isnan(max[2]));
  auto min = EvalValues(Binary("f32[2]", "minimum", "{1, nan}", "{2, 1}"));
  EXPECT_EQ(min[0], 1);
  EXPECT_TRUE(std::isnan(min[1]));
}

TEST(EvaluatorElementwise, IntegerSemantics) {
  // Wrap-around, division by zero, INT_MIN / -1, remainder by zero.
  EXPECT_THAT(EvalValues(Binary("s8[2]", "add", "{127, -128}", "{1, -1}")), ElementsAre(-128, 127));
  EXPECT_THAT(EvalValues(Binary("s32[4]", "divide", "{7, -7, 5, -2147483648}", "{2, 2, 0, -1}")),
              ElementsAre(3, -3, -1, -2147483648.0));
  EXPECT_THAT(EvalValues(Binary("u32[1]", "divide", "{5}", "{0}")), ElementsAre(4294967295.0));
  EXPECT_THAT(EvalValues(Binary("s32[3]", "remainder", "{7, -7, 5}", "{3, 3, 0}")),
              ElementsAre(1, -1, 5));
  EXPECT_THAT(EvalValues(Binary("u8[2]", "multiply", "{16, 200}", "{16, 2}")), ElementsAre(0, 144));
  EXPECT_THAT(EvalValues(Binary("s32[3]", "power", "{2, -1, 2}", "{10, 3, -1}")),
              ElementsAre(1024, -1, 0));
}

TEST(EvaluatorElementwise, Shifts) {
  EXPECT_THAT(EvalValues(Binary("s32[3]", "shift-left", "{1, 1, 1}", "{4, 31, 32}")),
              ElementsAre(16, -2147483648.0, 0));
  EXPECT_THAT(
      EvalValues(Binary("s32[3]", "shift-right-arithmetic", "{-16, -16, 16}", "{2, 40, 40}")),
      ElementsAre(-4, -1, 0));
  EXPECT_THAT(EvalValues(Binary("u32[2]", "shift-right-logical", "{4294967295, 8}", "{28, 32}")),
              ElementsAre(15, 0));
  EXPECT_THAT(EvalValues(Binary("u32[2]", "xor", "{12, 5}", "{10, 5}")), ElementsAre(6, 0));
  EXPECT_THAT(EvalValues(Binary("s32[1]", "and", "{12}", "{10}")), ElementsAre(8));
  EXPECT_THAT(EvalValues(Binary("s32[1]", "or", "{12}", "{10}")), ElementsAre(14));
  EXPECT_THAT(EvalValues(Binary("pred[2]", "and", "{1, 0}", "{1, 1}")), ElementsAre(1, 0));
}

TEST(EvaluatorElementwise, Unary) {
  EXPECT_THAT(EvalValues(Unary("f32[3]", "negate", "{1, -2, 0}")), ElementsAre(-1, 2, 0));
  EXPECT_THAT(EvalValues(Unary("f32[3]", "abs", "{1, -2, 0}")), ElementsAre(1, 2, 0));
  EXPECT_THAT(EvalValues(Unary("s32[2]", "abs", "{-2147483648, -3}")),
              ElementsAre(-2147483648.0, 3));
  EXPECT_THAT(EvalValues(Unary("f32[3]", "sign", "{-3, 0, 2}")), ElementsAre(-1, 0, 1));
  EXPECT_THAT(EvalValues(Unary("f32[3]", "floor", "{-1.5, 1.5, 2}")), ElementsAre(-2, 1, 2));
  EXPECT_THAT(EvalValues(Unary("f32[2]", "ceil", "{-1.5, 1.5}")), ElementsAre(-1, 2));
  EXPECT_THAT(EvalValues(Unary("f32[3]", "round-nearest-afz", "{0.5, 1.5, -2.5}")),
              ElementsAre(1, 2, -3));
  EXPECT_THAT(EvalValues(Unary("f32[3]", "round-nearest-even", "{0.5, 1.5, -2.5}")),
              ElementsAre(0, 2, -2));
  EXPECT_THAT(EvalValues(Unary("f32[2]", "sqrt", "{4, 9}")), ElementsAre(2, 3));
  EXPECT_THAT(EvalValues(Unary("f32[2]", "rsqrt", "{4, 0.25}")), ElementsAre(0.5, 2));
  EXPECT_THAT(EvalValues(Unary("f32[2]", "cbrt", "{8, -27}")),
              Pointwise(DoubleNear(1e-6), {2.0, -3.0}));
  EXPECT_THAT(EvalValues(Unary("f64[2]", "exponential", "{0, 1}")),
              Pointwise(DoubleNear(1e-12), {1.0, M_E}));
  EXPECT_THAT(EvalValues(Unary("f64[1]", "exponential-minus-one", "{1e-10}")),
              Pointwise(DoubleNear(1e-20), {1e-10}));
  EXPECT_THAT(EvalValues(Unary("f64[2]", "log", "{1, 2.718281828459045}")),
              Pointwise(DoubleNear(1e-12), {0.0, 1.0}));
  EXPECT_THAT(EvalValues(Unary("f64[1]", "log-plus-one", "{0}")), ElementsAre(0));
  EXPECT_THAT(EvalValues(Unary("f64[1]", "logistic", "{0}")), ElementsAre(0.5));
  EXPECT_THAT(EvalValues(Unary("f64[2]", "tanh", "{0, 100}")), ElementsAre(0, 1));
  EXPECT_THAT(EvalValues(Unary("f64[2]", "sine", "{0, 1.5707963267948966}")),
              Pointwise(DoubleNear(1e-12), {0.0, 1.0}));
  EXPECT_THAT(EvalValues(Unary("f64[1]", "cosine", "{0}")), ElementsAre(1));
  EXPECT_THAT(EvalValues(Unary("f64[1]", "erf", "{0}")), ElementsAre(0));
  EXPECT_THAT(EvalValues(Unary("s32[2]", "not", "{0, -1}")), ElementsAre(-1, 0));
  EXPECT_THAT(EvalValues(Unary("pred[2]", "not", "{1, 0}")), ElementsAre(0, 1));
  EXPECT_THAT(EvalValues(Unary("u32[2]", "popcnt", "{7, 4294967295}")), ElementsAre(3, 32));
  EXPECT_THAT(EvalValues(Unary("s32[2]", "count-leading-zeros", "{1, 0}")), ElementsAre(31, 32));
  auto finite = EvalText(
      "HloModule m\nENTRY e {\n c = f32[3] constant({1, inf, nan})\n ROOT r = pred[3] "
      "is-finite(c)\n}\n");
  ASSERT_TRUE(finite.ok()) << finite.status().message();
  EXPECT_THAT(testing::Values(*finite), ElementsAre(1, 0, 0));
}

TEST(EvaluatorElementwise, Bf16RoundsAfterEveryOp) {
  // 1 + 2^-9 is not representable in bf16 (8 significant bits): rounds to 1.
  EXPECT_THAT(EvalValues(Binary("bf16[1]", "add", "{1}", "{0.001953125}")), ElementsAre(1));
  // f16: 2048 + 1 rounds to 2048 (11 significant bits).
  EXPECT_THAT(EvalValues(Binary("f16[1]", "add", "{2048}", "{1}")), ElementsAre(2048));
  EXPECT_THAT(EvalValues(Binary("f32[1]", "add", "{2048}", "{1}")), ElementsAre(2049));
}

TEST(EvaluatorElementwise, CompareDirections) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[4] constant({1, 2, nan, -0})
  b = f32[4] constant({2, 2, nan, 0})
  lt = pred[4] compare(a, b), direction=LT
  eq = pred[4] compare(a, b), direction=EQ
  ne = pred[4] compare(a, b), direction=NE
  tlt = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  teq = pred[4] compare(a, b), direction=EQ, type=TOTALORDER
  u = u32[2] constant({1, 4294967295})
  v = u32[2] constant({2, 1})
  ugt = pred[2] compare(u, v), direction=GT
  ROOT t = (pred[4], pred[4], pred[4], pred[4], pred[4], pred[2]) tuple(lt, eq, ne, tlt, teq, ugt)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(1, 0, 1, 0));
  EXPECT_THAT(EvalValues(text, {}, 3), ElementsAre(1, 0, 0, 1));  // -0 < +0 in total order
  EXPECT_THAT(EvalValues(text, {}, 4), ElementsAre(0, 1, 1, 0));  // nan == nan
  EXPECT_THAT(EvalValues(text, {}, 5), ElementsAre(0, 1));
}

TEST(EvaluatorElementwise, SelectClamp) {
  const char* text = R"(HloModule m
ENTRY e {
  p = pred[3] constant({1, 0, 1})
  a = s32[3] constant({1, 2, 3})
  b = s32[3] constant({10, 20, 30})
  s = s32[3] select(p, a, b)
  lo = s32[] constant(2)
  hi = s32[] constant(25)
  c = s32[3] clamp(lo, b, hi)
  ROOT t = (s32[3], s32[3]) tuple(s, c)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 20, 3));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(10, 20, 25));
}

TEST(EvaluatorElementwise, Convert) {
  const char* text = R"(HloModule m
ENTRY e {
  f = f32[6] constant({1.9, -1.9, 3e10, -3e10, nan, 200})
  s = s32[6] convert(f)
  u = u8[6] convert(f)
  i = s32[2] constant({-1, 300})
  w = u8[2] convert(i)
  pr = pred[2] convert(i)
  b = bf16[1] constant({1.00390625})
  bf = f32[1] convert(b)
  x = f32[1] constant({1.00390625})
  xb = bf16[1] convert(x)
  ROOT t = (s32[6], u8[6], u8[2], pred[2], f32[1], bf16[1]) tuple(s, u, w, pr, bf, xb)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, -1, 2147483647, -2147483648.0, 0, 200));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 0, 255, 0, 0, 200));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(255, 44));
  EXPECT_THAT(EvalValues(text, {}, 3), ElementsAre(1, 1));
  EXPECT_THAT(EvalValues(text, {}, 4), ElementsAre(1));  // bf16 constant rounded
  EXPECT_THAT(EvalValues(text, {}, 5), ElementsAre(1));  // ties to even
}

TEST(EvaluatorElementwise, BitcastConvert) {
  const char* text = R"(HloModule m
ENTRY e {
  f = f32[2] constant({1, -2})
  u = u32[2] bitcast-convert(f)
  w = u32[2,2] constant({{1, 2}, {3, 4}})
  d = u64[2] bitcast-convert(w)
  ROOT t = (u32[2], u64[2]) tuple(u, d)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(0x3f800000, 0xc0000000));
  auto r = EvalText(text);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tuple_elements()[1].GetAsUint64(0), (uint64_t{2} << 32) | 1);
  EXPECT_EQ(r->tuple_elements()[1].GetAsUint64(1), (uint64_t{4} << 32) | 3);
}

TEST(EvaluatorElementwise, ComplexRealImag) {
  const char* text = R"(HloModule m
ENTRY e {
  re = f32[2] constant({1, 3})
  im = f32[2] constant({2, 4})
  c = c64[2] complex(re, im)
  m = c64[2] multiply(c, c)
  r = f32[2] real(m)
  i = f32[2] imag(m)
  a = f32[2] abs(c)
  ROOT t = (f32[2], f32[2], f32[2]) tuple(r, i, a)
})";
  // (1+2i)^2 = -3+4i, (3+4i)^2 = -7+24i; |3+4i| = 5.
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(-3, -7));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(4, 24));
  EXPECT_THAT(EvalValues(text, {}, 2), Pointwise(DoubleNear(1e-6), {std::sqrt(5.0), 5.0}));
}

TEST(EvaluatorElementwise, ReducePrecision) {
  // To bf16's format (8 exponent, 7 mantissa bits): 1 + 2^-9 -> 1; 1e-40
  // underflows with 5 exponent bits; 70000 overflows f16's range.
  const char* text = R"(HloModule m
ENTRY e {
  c = f32[2] constant({1.001953125, 3})
  r = f32[2] reduce-precision(c), exponent_bits=8, mantissa_bits=7
  d = f32[2] constant({70000, 1e-10})
  h = f32[2] reduce-precision(d), exponent_bits=5, mantissa_bits=10
  ROOT t = (f32[2], f32[2]) tuple(r, h)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 3));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(kInf, 0));
}

TEST(EvaluatorShape, BroadcastReshapeTranspose) {
  const char* text = R"(HloModule m
ENTRY e {
  c = s32[2] constant({1, 2})
  b = s32[2,3] broadcast(c), dimensions={0}
  r = s32[3,2] reshape(b)
  t = s32[3,2] transpose(b), dimensions={1,0}
  m = s32[2,3,4] iota(), iota_dimension=2
  mt = s32[4,2,3] transpose(m), dimensions={2,0,1}
  ROOT tup = (s32[2,3], s32[3,2], s32[3,2], s32[4,2,3]) tuple(b, r, t, mt)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 1, 1, 2, 2, 2));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 1, 1, 2, 2, 2));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(1, 2, 1, 2, 1, 2));
  auto mt = EvalValues(text, {}, 3);
  ASSERT_EQ(mt.size(), 24u);
  EXPECT_EQ(mt[0], 0);
  EXPECT_EQ(mt[6], 1);   // [1,0,0]
  EXPECT_EQ(mt[23], 3);  // [3,1,2]
}

TEST(EvaluatorShape, SliceReverseConcatenatePad) {
  const char* text = R"(HloModule m
ENTRY e {
  i = s32[2,5] iota(), iota_dimension=1
  s = s32[2,2] slice(i), slice={[0:2], [1:5:2]}
  r = s32[2,5] reverse(i), dimensions={1}
  a = s32[1,2] constant({{7, 8}})
  c = s32[3,2] concatenate(s, a), dimensions={0}
  v = s32[3] constant({1, 2, 3})
  z = s32[] constant(0)
  p = s32[8] pad(v, z), padding=1_2_1
  n = s32[2] pad(v, z), padding=-1_0
  ROOT t = (s32[2,2], s32[2,5], s32[3,2], s32[8], s32[2]) tuple(s, r, c, p, n)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 3, 1, 3));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(4, 3, 2, 1, 0, 4, 3, 2, 1, 0));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(1, 3, 1, 3, 7, 8));
  EXPECT_THAT(EvalValues(text, {}, 3), ElementsAre(0, 1, 0, 2, 0, 3, 0, 0));
  EXPECT_THAT(EvalValues(text, {}, 4), ElementsAre(2, 3));
}

TEST(EvaluatorShape, DynamicSliceClamps) {
  const char* text = R"(HloModule m
ENTRY e {
  i = s32[6] iota(), iota_dimension=0
  k = s32[] constant(5)
  ds = s32[3] dynamic-slice(i, k), dynamic_slice_sizes={3}
  u = s32[2] constant({70, 80})
  m = s32[] constant(-4)
  dus = s32[6] dynamic-update-slice(i, u, m)
  ROOT t = (s32[3], s32[6]) tuple(ds, dus)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(3, 4, 5));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(70, 80, 2, 3, 4, 5));
}

TEST(EvaluatorShape, Gather) {
  // Row gather (embedding lookup) with an out-of-range index clamped.
  const char* text = R"(HloModule m
ENTRY e {
  t = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  i = s32[3] constant({2, 0, 9})
  ROOT g = f32[3,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(5, 6, 1, 2, 5, 6));
  // Batching dims: out[b, j] = t[b, i[b, j]].
  const char* batched = R"(HloModule m
ENTRY e {
  t = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  i = s32[2,2,1] constant({{{2}, {0}}, {{1}, {1}}})
  ROOT g = s32[2,2] gather(t, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
})";
  EXPECT_THAT(EvalValues(batched), ElementsAre(3, 1, 5, 5));
}

TEST(EvaluatorShape, BitcastWithLayouts) {
  // A {0,1} layout is column-major: the bitcast reinterprets physical order.
  const char* text = R"(HloModule m
ENTRY e {
  c = s32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})
  t = s32[2,3]{0,1} copy(c)
  ROOT b = s32[6]{0} bitcast(t)
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(EvaluatorDot, MatmulAndBatch) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  b = f32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})
  d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[2,2,2] constant({{{1, 2}, {3, 4}}, {{1, 0}, {0, 1}}})
  y = f32[2,2,2] constant({{{1, 1}, {1, 1}}, {{2, 3}, {4, 5}}})
  bd = f32[2,2,2] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  tr = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[2] constant({100000, 3})
  id = s32[] dot(i, i), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[2,2], f32[2,2,2], s32[]) tuple(d, bd, id)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(4, 5, 10, 11));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(3, 3, 7, 7, 2, 3, 4, 5));
  // 10^10 + 9 wraps in s32.
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(static_cast<int32_t>(10000000009LL)));
}

// ragged-dot, which JAX emits for lax.ragged_dot on GPUs and TPUs. Ragged
// rows (mode 1): group sizes {1, 2} put row 0 in group 0 (rhs[0] sums a row)
// and rows 1-2 in group 1 (rhs[1] takes its first element). Ragged
// contraction (mode 2): sizes {1, 3} sum k = 0 into output 0 and k = 1..3
// into output 1.
TEST(EvaluatorDot, RaggedDotRowsAndContraction) {
  const char* rows = R"(HloModule m
ENTRY e {
  x = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  w = f32[2,2,1] constant({{{1}, {1}}, {{1}, {0}}})
  g = s32[2] constant({1, 2})
  ROOT r = f32[3,1] ragged-dot(x, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})";
  EXPECT_THAT(EvalValues(rows), ElementsAre(3, 3, 5));
  const char* contraction = R"(HloModule m
ENTRY e {
  x = f32[1,4] constant({{1, 2, 3, 4}})
  w = f32[4,1] constant({{1}, {1}, {1}, {1}})
  g = s32[2] constant({1, 3})
  ROOT r = f32[2,1,1] ragged-dot(x, w, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})";
  EXPECT_THAT(EvalValues(contraction), ElementsAre(1, 9));
  // A ragged batch dimension (mode 3): each batch element's own product,
  // whatever the group sizes.
  const char* batch = R"(HloModule m
ENTRY e {
  x = f32[2,1,2] constant({{{1, 2}}, {{3, 4}}})
  w = f32[2,2,1] constant({{{1}, {1}}, {{1}, {0}}})
  g = s32[2] constant({2, 0})
  ROOT r = f32[2,1,1] ragged-dot(x, w, g), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
})";
  EXPECT_THAT(EvalValues(batch), ElementsAre(3, 3));
}

TEST(EvaluatorDot, ContractingFirstDim) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[3,2] constant({{1, 4}, {2, 5}, {3, 6}})
  b = f32[3] constant({1, 1, 1})
  ROOT d = f32[2] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(6, 15));
}

// fp8 and sub-byte operands (Qwix's fp8 training: f8e4m3fn into f32; int4 weights) are
// multiplied with the values they hold: 448 is f8e4m3fn's largest, 0.4375 one of its
// fractions, -8 s4's smallest.
TEST(EvaluatorDot, NarrowOperandsKeepTheirValues) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f8e4m3fn[1,2] constant({{448, 0.4375}})
  b = f8e4m3fn[2,1] constant({{2}, {-0.5}})
  f = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s4[2] constant({-8, 7})
  j = s8[2] constant({3, 2})
  n = s32[] dot(i, j), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[1,1], s32[]) tuple(f, n)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(895.78125));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(-10));
}

TEST(EvaluatorConvolution, Conv1dPaddingStride) {
  // Input 1 batch, 1 feature, width 5; kernel width 3 of ones; pad 1, stride 2.
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[1,1,5] constant({{{1, 2, 3, 4, 5}}})
  k = f32[1,1,3] constant({{{1, 1, 1}}})
  ROOT c = f32[1,1,3] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(3, 9, 9));
}

TEST(EvaluatorConvolution, Conv2dNhwcAndDilation) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[1,3,3,1] constant({{{{1}, {2}, {3}}, {{4}, {5}, {6}}, {{7}, {8}, {9}}}})
  k = f32[2,2,1,1] constant({{{{1}}, {{0}}}, {{{0}}, {{1}}}})
  c = f32[1,2,2,1] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f
  d = f32[1,1,1,1] convolution(x, k), window={size=2x2 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  l = f32[1,5,5,1] convolution(x, k), window={size=2x2 pad=1_0x1_0 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[1,2,2,1], f32[1,1,1,1], f32[1,5,5,1]) tuple(c, d, l)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(6, 8, 12, 14));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(10));  // x[0,0] + x[2,2]
  auto l = EvalValues(text, {}, 2);
  ASSERT_EQ(l.size(), 25u);
  // Dilated input has x at even positions; window at (0,0) covers padded
  // (-1,-1) and (0,0): only x[0,0] = 1 via tap (1,1).
  EXPECT_EQ(l[0], 1);
  EXPECT_EQ(l[1], 0);
  EXPECT_EQ(l[2], 2);
}

TEST(EvaluatorConvolution, FeatureGroups) {
  // Depthwise: 2 features, each with its own 1-tap kernel.
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[1,2,2] constant({{{1, 2}, {3, 4}}})
  k = f32[2,1,1] constant({{{10}}, {{100}}})
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(10, 20, 300, 400));
}

TEST(EvaluatorConvolution, BatchGroups) {
  // batch_group_count=2: output feature g uses input batch g.
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[2,1,2] constant({{{1, 2}}, {{3, 4}}})
  k = f32[2,1,1] constant({{{1}}, {{10}}})
  ROOT c = f32[1,2,2] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0, batch_group_count=2
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(1, 2, 30, 40));
}

const char* kAddComputation = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
)";

TEST(EvaluatorReduce, SumAndMax) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  z = f32[] constant(0)
  r0 = f32[3] reduce(c, z), dimensions={0}, to_apply=add
  r1 = f32[2] reduce(c, z), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  m = f32[] reduce(c, ninf), dimensions={0,1}, to_apply=max
  ROOT t = (f32[3], f32[2], f32[]) tuple(r0, r1, m)
})");
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(5, 7, 9));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(6, 15));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(6));
}

// A float sum is as close to the exact sum as one rounding: summed one by one
// in f32, 2^20 times 0.1 drifts by about 1% (each addition rounds at the
// running total's scale), and batch-norm statistics (E[x^2] - E[x]^2) then
// cancel to noise; XLA's CPU backend sums in vectorized partial sums and trees
// and stays within a few ulps. Both layouts: the reduced dimension innermost
// (one output) and outermost (16 outputs accumulated side by side).
TEST(EvaluatorReduce, FloatSumsRoundOnce) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  tenth = f32[] constant(0.1)
  z = f32[] constant(0)
  flat = f32[1048576] broadcast(tenth), dimensions={}
  tall = f32[65536,16] broadcast(tenth), dimensions={}
  inner = f32[] reduce(flat, z), dimensions={0}, to_apply=add
  outer = f32[16] reduce(tall, z), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[16]) tuple(inner, outer)
})");
  const double tenth = 0.1f;
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(static_cast<float>(1048576 * tenth)));
  EXPECT_THAT(EvalValues(text, {}, 1), Each(static_cast<float>(65536 * tenth)));
}

// The batch-norm-inference -> relu -> global-average-pool tail of
// resnet_infer_r50_w8_px32_cifar_b2_f32: a negative running variance makes rsqrt NaN, relu
// (maximum with 0) keeps the NaN, and the pool's sum is NaN. HLO's maximum propagates NaN even
// when it feeds a reduce. XLA:CPU (jaxlib 0.10.2) fuses reduce(maximum(x, 0)) and, once the
// reduce's output has 256 elements or more (f32 and f64), returns 0 for NaN inputs, while the
// same maximum unfused gives NaN; XLA's finite output for that module is this codegen artifact.
TEST(EvaluatorReduce, NanFromRsqrtSurvivesReluAndPool) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  x = f32[2,2,2,2] parameter(0)
  var = f32[2] parameter(1)
  eps = f32[] constant(1e-05)
  epsb = f32[2] broadcast(eps), dimensions={}
  v = f32[2] add(var, epsb)
  inv = f32[2] rsqrt(v)
  invb = f32[2,2,2,2] broadcast(inv), dimensions={3}
  y = f32[2,2,2,2] multiply(x, invb)
  z = f32[] constant(0)
  zb = f32[2,2,2,2] broadcast(z), dimensions={}
  relu = f32[2,2,2,2] maximum(y, zb)
  ROOT pool = f32[2,2] reduce(relu, z), dimensions={1,2}, to_apply=add
})");
  // Channel 0 has variance -0.5 (NaN after rsqrt), channel 1 variance 0.25 - 1e-5 (scale 2).
  Literal x = MakeLiteral("f32[2,2,2,2]", {1, 1, -1, 1, 2, -3, 3, 1, -1, 2, 1, 0.5, 0, -1, 4, 1});
  Literal var = MakeLiteral("f32[2]", {-0.5, 0.25 - 1e-5});
  auto pool = EvalValues(text, {x, var});
  ASSERT_EQ(pool.size(), 4u);
  EXPECT_TRUE(std::isnan(pool[0])) << pool[0];
  EXPECT_NEAR(pool[1], 2 * (1 + 1 + 1 + 0), 1e-4);  // relu keeps 1, 1, 1 and drops -3
  EXPECT_TRUE(std::isnan(pool[2])) << pool[2];
  EXPECT_NEAR(pool[3], 2 * (2 + 0.5 + 0 + 1), 1e-4);  // relu drops -1
}

TEST(EvaluatorReduce, VariadicArgmax) {
  const char* text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  c = f32[2,3] constant({{1, 7, 3}, {9, 5, 6}})
  idx = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(c, idx, ninf, zero), dimensions={1}, to_apply=argmax
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(7, 9));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 0));
}

TEST(EvaluatorReduce, ReduceWindowCumsumAndPool) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  c = f32[4] constant({1, 2, 3, 4})
  z = f32[] constant(0)
  cs = f32[4] reduce-window(c, z), window={size=4 pad=3_0}, to_apply=add
  ninf = f32[] constant(-inf)
  p = f32[2] reduce-window(c, ninf), window={size=2 stride=2}, to_apply=max
  ROOT t = (f32[4], f32[2]) tuple(cs, p)
})");
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 3, 6, 10));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(2, 4));
}

TEST(EvaluatorReduce, SelectAndScatter) {
  const char* text = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  op = f32[4] constant({1, 5, 7, 2})
  src = f32[2] constant({10, 20})
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(op, src, z), window={size=2 stride=2}, select=ge, scatter=add
})";
  EXPECT_THAT(EvalValues(text), ElementsAre(0, 10, 20, 0));
}

TEST(EvaluatorScatter, AddOverwriteAndOutOfBounds) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
second {
  x = f32[] parameter(0)
  ROOT y = f32[] parameter(1)
}
ENTRY e {
  op = f32[3,2] constant({{1, 1}, {1, 1}, {1, 1}})
  idx = s32[3] constant({2, 0, 2})
  up = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  a = f32[3,2] scatter(op, idx, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  bad = s32[3] constant({5, -1, 1})
  o = f32[3,2] scatter(op, bad, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=second
  ROOT t = (f32[3,2], f32[3,2]) tuple(a, o)
})");
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(4, 5, 1, 1, 7, 9));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 1, 5, 6, 1, 1));
}

// Indices at the type's maximum (the dynamic padder points indices past a
// size there) are out of bounds like any other: their windows are skipped,
// where start + window size used to overflow into a write outside the result.
TEST(EvaluatorScatter, IndicesAtTheTypesMaximumAreSkipped) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  op = f32[4,2] constant({{1, 1}, {1, 1}, {1, 1}, {1, 1}})
  idx = s64[3] constant({9223372036854775807, 1, 9223372036854775807})
  up = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  ROOT a = f32[4,2] scatter(op, idx, up), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
  EXPECT_THAT(EvalValues(text, {}), ElementsAre(1, 1, 4, 5, 1, 1, 1, 1));
}

// Windows whose last dimension is contiguous in operand and updates are combined a row at a time;
// the rows must land at the operand's stride (4), not the updates' (2), and a window along a
// strided dimension still goes element by element.
TEST(EvaluatorScatter, WindowRowsAndStridedWindows) {
  std::string text = absl::StrCat("HloModule m\n", kAddComputation, R"(
ENTRY e {
  op = f32[3,4] constant({{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}})
  idx = s32[1,2] constant({{0, 1}})
  up = f32[1,3,2] constant({{{1, 2}, {3, 4}, {5, 6}}})
  rows = f32[3,4] scatter(op, idx, up), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
  op2 = f32[3,2] constant({{1, 1}, {1, 1}, {1, 1}})
  col = s32[1] constant({1})
  up2 = f32[1,3] constant({{7, 8, 9}})
  column = f32[3,2] scatter(op2, col, up2), update_window_dims={1}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[3,4], f32[3,2]) tuple(rows, column)
})");
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(1, 2, 3, 1, 1, 4, 5, 1, 1, 6, 7, 1));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 8, 1, 9, 1, 10));
}

TEST(EvaluatorSort, VariadicStableWithComparator) {
  const char* text = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  na = f32[] negate(a)
  nb = f32[] negate(b)
  ROOT lt = pred[] compare(na, nb), direction=LT
}
simple {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[2,4] constant({{3, 1, 3, 2}, {0, 5, 4, 5}})
  v = s32[2,4] iota(), iota_dimension=1
  s = (f32[2,4], s32[2,4]) sort(k, v), dimensions={1}, is_stable=true, to_apply=cmp
  c = s32[5] constant({5, -1, 3, 0, 3})
  s2 = s32[5] sort(c), dimensions={0}, to_apply=simple
  k0 = f32[2,4] get-tuple-element(s), index=0
  v0 = s32[2,4] get-tuple-element(s), index=1
  ROOT t = (f32[2,4], s32[2,4], s32[5]) tuple(k0, v0, s2)
})";
  // Descending (comparator negates), stable: ties keep index order.
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(3, 3, 2, 1, 5, 5, 4, 0));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(0, 2, 3, 1, 1, 3, 2, 0));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(-1, 0, 3, 3, 5));
}

TEST(EvaluatorControlFlow, WhileConditionalCall) {
  const char* text = R"(HloModule m
cond {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  two = f32[] constant(2)
  i1 = s32[] add(i, one)
  x1 = f32[] multiply(x, two)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
double {
  a = f32[] parameter(0)
  ROOT d = f32[] add(a, a)
}
negate {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[] constant(1)
  init = (s32[], f32[]) tuple(z, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  r = f32[] get-tuple-element(w), index=1
  b = s32[] constant(7)
  c = f32[] conditional(b, r, r), branch_computations={double, negate}
  p = pred[] constant(true)
  c2 = f32[] conditional(p, r, r), true_computation=double, false_computation=negate
  k = f32[] call(r), to_apply=negate
  ROOT t = (f32[], f32[], f32[], f32[]) tuple(r, c, c2, k)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(32));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(-32));  // out-of-range index -> last branch
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(64));
  EXPECT_THAT(EvalValues(text, {}, 3), ElementsAre(-32));
}

TEST(EvaluatorControlFlow, FusionMapParameters) {
  const char* text = R"(HloModule m
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT m = f32[2] multiply(a, b)
}
sq {
  x = f32[] parameter(0)
  ROOT y = f32[] multiply(x, x)
}
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  f = f32[2] fusion(p, q), kind=kLoop, calls=fused
  m = f32[2] map(f), dimensions={0}, to_apply=sq
  ROOT t = (f32[2], f32[2]) tuple(f, m)
})";
  std::vector<Literal> args;
  args.push_back(MakeLiteral("f32[2]", {2, 3}));
  args.push_back(MakeLiteral("f32[2]", {4, 5}));
  EXPECT_THAT(EvalValues(text, args, 0), ElementsAre(8, 15));
  EXPECT_THAT(EvalValues(text, args, 1), ElementsAre(64, 225));
}

TEST(EvaluatorOther, FftRoundTrip) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[4] constant({1, 2, 3, 4})
  r = c64[3] fft(x), fft_type=RFFT, fft_length={4}
  b = f32[4] fft(r), fft_type=IRFFT, fft_length={4}
  re = f32[3] real(r)
  im = f32[3] imag(r)
  ROOT t = (f32[3], f32[3], f32[4]) tuple(re, im, b)
})";
  // DFT of 1,2,3,4: 10, -2+2i, -2.
  EXPECT_THAT(EvalValues(text, {}, 0), Pointwise(DoubleNear(1e-5), {10.0, -2.0, -2.0}));
  EXPECT_THAT(EvalValues(text, {}, 1), Pointwise(DoubleNear(1e-5), {0.0, 2.0, 0.0}));
  EXPECT_THAT(EvalValues(text, {}, 2), Pointwise(DoubleNear(1e-5), {1.0, 2.0, 3.0, 4.0}));
}

TEST(EvaluatorOther, TopKAndCustomCall) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[2,4] constant({{1, 9, 3, 9}, {-1, -5, 2, 0}})
  t = (f32[2,2], s32[2,2]) topk(x), k=2, largest=true
  v = f32[2,2] get-tuple-element(t), index=0
  i = s32[2,2] get-tuple-element(t), index=1
  o = f32[3] custom-call(x), custom_call_target="SomeVendorOp"
  o2 = f32[3] custom-call(x), custom_call_target="SomeVendorOp"
  ROOT r = (f32[2,2], s32[2,2], f32[3], f32[3]) tuple(v, i, o, o2)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(9, 9, 2, 0));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(1, 3, 2, 3));
  auto o = EvalValues(text, {}, 2);
  EXPECT_EQ(o, EvalValues(text, {}, 3));  // opaque but deterministic
  for (double v : o) EXPECT_LE(std::fabs(v), 1.0);
}

TEST(EvaluatorOther, CholeskyTriangularSolveBatchNorm) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{4, 2}, {2, 5}})
  l = f32[2,2] cholesky(a), lower=true
  b = f32[2,1] constant({{2}, {5}})
  x = f32[2,1] triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  v = f32[2,2] constant({{1, 10}, {3, 30}})
  s = f32[2] constant({1, 1})
  o = f32[2] constant({0, 0})
  bn = (f32[2,2], f32[2], f32[2]) batch-norm-training(v, s, o), epsilon=0, feature_index=1
  y = f32[2,2] get-tuple-element(bn), index=0
  m = f32[2] get-tuple-element(bn), index=1
  ROOT t = (f32[2,2], f32[2,1], f32[2,2], f32[2]) tuple(l, x, y, m)
})";
  // L = [[2,0],[1,2]]; L x = [2,5] -> x = [1, 2].
  EXPECT_THAT(EvalValues(text, {}, 0), Pointwise(DoubleNear(1e-6), {2.0, 0.0, 1.0, 2.0}));
  EXPECT_THAT(EvalValues(text, {}, 1), Pointwise(DoubleNear(1e-6), {1.0, 2.0}));
  EXPECT_THAT(EvalValues(text, {}, 2), Pointwise(DoubleNear(1e-6), {-1.0, -1.0, 1.0, 1.0}));
  EXPECT_THAT(EvalValues(text, {}, 3), ElementsAre(2, 20));
}

TEST(EvaluatorMisc, ElidedConstantsAreDeterministic) {
  const char* text = R"(HloModule m
ENTRY e {
  ROOT c = f32[4] constant({...})
})";
  auto a = EvalValues(text);
  auto b = EvalValues(text);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a, b);
  for (double v : a) EXPECT_LE(std::fabs(v), 1.0);
}

TEST(EvaluatorMisc, UnsupportedOpcodeIsAnError) {
  auto module = ParseModule(R"(HloModule m
ENTRY e {
  c = f32[2] constant({1, 2})
  u = u32[2] constant({1, 2})
  ROOT my_op = bf16[2] stochastic-convert(c, u)
})");
  if (!module.ok()) FAIL() << "parser rejects the test module: " << module.status().message();
  auto r = Evaluate(**module, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("my_op"));
}

TEST(EvaluatorMisc, WrongArgumentsAreRejected) {
  auto module = ParseModule("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ASSERT_TRUE(module.ok());
  EXPECT_FALSE(Evaluate(**module, {}).ok());
  std::vector<Literal> wrong;
  wrong.push_back(MakeLiteral("f32[3]", {1, 2, 3}));
  EXPECT_FALSE(Evaluate(**module, wrong).ok());
}

TEST(EvaluatorMisc, WhileIterationLimit) {
  auto module = ParseModule(R"(HloModule m
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT p = s32[] parameter(0)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT loop = s32[] while(z), condition=cond, body=body
})");
  ASSERT_TRUE(module.ok());
  EvaluatorOptions options;
  options.max_while_iterations = 100;
  auto r = Evaluate(**module, {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("loop"));
}

// A budget of instructions counts every iteration of a loop's condition and body: 10 iterations
// run the condition 11 times (3 instructions) and the body 10 (4), beside the entry's 3: 76.
TEST(EvaluatorMisc, InstructionBudgetCountsLoopIterations) {
  auto module = ParseModule(R"(HloModule m
cond {
  p = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(p, ten), direction=LT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  n = s32[] add(p, one)
  ROOT c = s32[] copy(n)
}
ENTRY e {
  z = s32[] constant(0)
  loop = s32[] while(z), condition=cond, body=body
  ROOT r = s32[] negate(loop)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  EvaluatorOptions options;
  options.max_instructions = 76;
  auto enough = Evaluate(**module, {}, options);
  ASSERT_TRUE(enough.ok()) << enough.status();
  EXPECT_EQ(enough->GetAsInt64(0), -10);
  options.max_instructions = 75;
  auto short_by_one = Evaluate(**module, {}, options);
  ASSERT_FALSE(short_by_one.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(short_by_one.status())) << short_by_one.status();
  EXPECT_THAT(std::string(short_by_one.status().message()), ::testing::HasSubstr("budget of 75"));
}

// JAX's LAPACK/cuSOLVER Cholesky custom calls: the selected triangle holds the
// factor (compared with the evaluator's own cholesky op), the other triangle
// keeps the input, info is 0 or the order of the failing leading minor.
TEST(EvaluatorCustomCall, LapackPotrfMatchesCholesky) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,3,3] constant({{{4, 7, 8}, {2, 5, 9}, {-2, 3, 14}}, {{1, 2, 0}, {2, 1, 0}, {0, 0, 1}}})
  p = (f32[2,3,3], s32[2]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 76 : ui8}
  f = f32[2,3,3] get-tuple-element(p), index=0
  i = s32[2] get-tuple-element(p), index=1
  l = f32[2,3,3] cholesky(a), lower=true
  ROOT t = (f32[2,3,3], s32[2], f32[2,3,3]) tuple(f, i, l)
})";
  auto f = EvalValues(text, {}, 0);
  auto l = EvalValues(text, {}, 2);
  ASSERT_EQ(f.size(), 18u);
  // Batch 0: lower triangle = L of [[4,2,-2],[2,5,3],[-2,3,14]]
  // = [[2,0,0],[1,2,0],[-1,2,3]]; the strict upper triangle is the input.
  const std::vector<double> expected0 = {2, 7, 8, 1, 2, 9, -1, 2, 3};
  for (int k = 0; k < 9; ++k) EXPECT_NEAR(f[k], expected0[k], 1e-5) << k;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) EXPECT_NEAR(f[i * 3 + j], l[i * 3 + j], 1e-5);
  }
  // Batch 1 is indefinite: 1 - 2*2 < 0 at order 2.
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(0, 2));
}

TEST(EvaluatorCustomCall, PotrfUpperCusolverAndLegacy) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f64[2,2] constant({{4, 2}, {6, 5}})
  pu = (f64[2,2], s32[]) custom-call(a), custom_call_target="lapack_dpotrf_ffi", backend_config={uplo = 85 : ui8}
  u = f64[2,2] get-tuple-element(pu), index=0
  pc = (f64[2,2], s32[]) custom-call(a), custom_call_target="cusolver_potrf_ffi", backend_config={lower = true}
  c = f64[2,2] get-tuple-element(pc), index=0
  one = s32[] constant(1)
  two = s32[] constant(2)
  pl = (f64[2,2], s32[]) custom-call(one, one, two, a), custom_call_target="lapack_dpotrf"
  g = f64[2,2] get-tuple-element(pl), index=0
  ROOT t = (f64[2,2], f64[2,2], f64[2,2]) tuple(u, c, g)
})";
  // Upper reads {4, 2, 5}: U = [[2, 1], [., 2]], the lower element stays 6.
  EXPECT_THAT(EvalValues(text, {}, 0), Pointwise(DoubleNear(1e-12), {2.0, 1.0, 6.0, 2.0}));
  // Lower reads {4, 6, 5}: L = [[2, .], [3, sqrt(-4)]] fails at order 2.
  auto c = EvalValues(text, {}, 1);
  EXPECT_NEAR(c[0], 2.0, 1e-12);
  EXPECT_NEAR(c[1], 2.0, 1e-12);  // untouched upper element
  EXPECT_NEAR(c[2], 3.0, 1e-12);
  EXPECT_EQ(EvalValues(text, {}, 1), EvalValues(text, {}, 2));  // legacy, lower=1
}

TEST(EvaluatorCustomCall, PotrfInfoAndBadShapes) {
  const char* ok = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{9, 0}, {3, 5}})
  p = (f32[2,2], s32[]) custom-call(a), custom_call_target="cusolver_potrf_ffi", backend_config={lower = true}
  ROOT i = s32[] get-tuple-element(p), index=1
})";
  EXPECT_THAT(EvalValues(ok), ElementsAre(0));
  auto module = ParseModule(R"(HloModule m
ENTRY e {
  a = f32[2,3] constant({{1, 0, 0}, {0, 1, 0}})
  ROOT p = (f32[2,3], s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", backend_config={uplo = 76 : ui8}
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  auto r = Evaluate(**module, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("lapack_spotrf_ffi"));
}

// blas_?trsm_ffi: op(a) x = alpha b (side L) or x op(a) = alpha b (side R),
// compared with the evaluator's triangular-solve on the same input.
TEST(EvaluatorCustomCall, BlasTrsmMatchesTriangularSolve) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[3,3] constant({{2, 9, 9}, {1, 4, 9}, {3, -1, 5}})
  b = f32[3,2] constant({{2, 4}, {5, -1}, {3, 7}})
  br = f32[2,3] constant({{2, 4, 5}, {-1, 3, 7}})
  alpha = f32[] constant(2)
  x1 = f32[3,2] custom-call(a, b, alpha), custom_call_target="blas_strsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}
  r1 = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=TRANSPOSE
  x2 = f32[2,3] custom-call(a, br, alpha), custom_call_target="blas_strsm_ffi", backend_config={diag = 85 : ui8, side = 82 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}
  r2 = f32[2,3] triangular-solve(a, br), left_side=false, lower=false, unit_diagonal=true, transpose_a=NO_TRANSPOSE
  ROOT t = (f32[3,2], f32[3,2], f32[2,3], f32[2,3]) tuple(x1, r1, x2, r2)
})";
  auto x1 = EvalValues(text, {}, 0), r1 = EvalValues(text, {}, 1);
  auto x2 = EvalValues(text, {}, 2), r2 = EvalValues(text, {}, 3);
  ASSERT_EQ(x1.size(), 6u);
  ASSERT_EQ(x2.size(), 6u);
  for (int k = 0; k < 6; ++k) {
    EXPECT_NEAR(x1[k], 2 * r1[k], 1e-4) << k;
    EXPECT_NEAR(x2[k], 2 * r2[k], 1e-4) << k;
  }
  // Hand check of x2's first row: x [[1,9,9],[0,1,9],[0,0,1]] = 2*[2,4,5]:
  // x0 = 4, x1 = 8 - 36 = -28, x2 = 10 - 36 + 252 = 226.
  EXPECT_NEAR(x2[0], 4, 1e-4);
  EXPECT_NEAR(x2[1], -28, 1e-4);
  EXPECT_NEAR(x2[2], 226, 1e-3);
}

// JAX's GPU ThreeFry kernel, against the Random123 known-answer vectors that
// JAX's random_test also uses.
TEST(EvaluatorCustomCall, CuThreeFry2x32KnownAnswers) {
  const char* text = R"(HloModule m
ENTRY e {
  k0 = u32[3] constant({0, 4294967295, 320440878})
  k1 = u32[3] constant({0, 4294967295, 57701188})
  x0 = u32[3] constant({0, 4294967295, 608135816})
  x1 = u32[3] constant({0, 4294967295, 2242054355})
  r = (u32[3], u32[3]) custom-call(k0, k1, x0, x1), custom_call_target="cu_threefry2x32_ffi"
  q = (u32[3], u32[3]) custom-call(k0, k1, x0, x1), custom_call_target="cu_threefry2x32", backend_config="\003\000\000\000\000\000\000\000"
  a = u32[3] get-tuple-element(r), index=0
  b = u32[3] get-tuple-element(r), index=1
  c = u32[3] get-tuple-element(q), index=0
  ROOT t = (u32[3], u32[3], u32[3]) tuple(a, b, c)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), ElementsAre(0x6b200159u, 0x1cb996fcu, 0xc4923a9cu));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(0x99ba4efeu, 0xbb002be7u, 0x483df7a0u));
  EXPECT_EQ(EvalValues(text, {}, 2), EvalValues(text, {}, 0));
  auto module = ParseModule(R"(HloModule m
ENTRY e {
  k = u32[2] constant({1, 2})
  x = u32[3] constant({1, 2, 3})
  ROOT r = (u32[3], u32[3]) custom-call(k, k, x, x), custom_call_target="cu_threefry2x32_ffi"
})");
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_FALSE(Evaluate(**module, {}).ok());
}

// jaxlib's LAPACK kernels on CPU (src/eval/lapack_custom_calls.h), hand
// worked. getrf: [[1, 2], [3, 4]] swaps its rows (|3| > |1|), l = 1/3,
// u22 = 2 - 4/3; [[0, 0], [0, 1]] has a zero first pivot (info 1) and goes on.
TEST(EvaluatorCustomCall, LapackGetrfPivotsAndReportsAZeroPivot) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2,2] constant({{{1, 2}, {3, 4}}, {{0, 0}, {0, 1}}})
  f = (f32[2,2,2], s32[2,2], s32[2]) custom-call(a), custom_call_target="lapack_sgetrf_ffi"
  lu = f32[2,2,2] get-tuple-element(f), index=0
  ipiv = s32[2,2] get-tuple-element(f), index=1
  info = s32[2] get-tuple-element(f), index=2
  ROOT t = (f32[2,2,2], s32[2,2], s32[2]) tuple(lu, ipiv, info)
})";
  EXPECT_THAT(EvalValues(text, {}, 0),
              Pointwise(DoubleNear(1e-6), {3.0, 4.0, 1.0 / 3, 2.0 / 3, 0.0, 0.0, 0.0, 1.0}));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(2, 2, 1, 2));
  EXPECT_THAT(EvalValues(text, {}, 2), ElementsAre(0, 1));
}

// gtsv on [[1, 1, 0], [2, 1, 1], [0, 1, 1]] x = [1, 2, 3]: the first step
// swaps rows (|2| > |1|); x = [-0.5, 1.5, 1.5]. dl[0] and du[2] are not read.
// An all-zero system has a zero first pivot: info 1.
TEST(EvaluatorCustomCall, LapackGtsvSolvesWithRowSwaps) {
  const char* text = R"(HloModule m
ENTRY e {
  dl = f32[2,3] constant({{99, 2, 1}, {0, 0, 0}})
  d = f32[2,3] constant({{1, 1, 1}, {0, 0, 0}})
  du = f32[2,3] constant({{1, 1, 99}, {0, 0, 0}})
  b = f32[2,3,1] constant({{{1}, {2}, {3}}, {{1}, {1}, {1}}})
  s = (f32[2,3], f32[2,3], f32[2,3], f32[2,3,1], s32[2]) custom-call(dl, d, du, b), custom_call_target="lapack_sgtsv_ffi"
  x = f32[2,3,1] get-tuple-element(s), index=3
  info = s32[2] get-tuple-element(s), index=4
  ROOT t = (f32[2,3,1], s32[2]) tuple(x, info)
})";
  const std::vector<double> x = EvalValues(text, {}, 0);
  ASSERT_EQ(x.size(), 6u);
  EXPECT_THAT(std::vector<double>(x.begin(), x.begin() + 3),
              Pointwise(DoubleNear(1e-6), {-0.5, 1.5, 1.5}));
  EXPECT_THAT(EvalValues(text, {}, 1), ElementsAre(0, 1));
}

// gesdd of diag(3, -2): s = [3, 2], and U diag(s) Vt gives the matrix back
// whatever the singular vectors' signs. syevd of [[2, 1], [1, 2]]: w = [1, 3].
// lapack_strsm_ffi (no alpha) is blas_strsm_ffi with alpha 1.
TEST(EvaluatorCustomCall, LapackSvdEighAndTwoOperandTrsm) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{3, 0}, {0, -2}})
  svd = (f32[2,2], f32[2], f32[2,2], f32[2,2], s32[]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={mode = 65 : ui8}
  s = f32[2] get-tuple-element(svd), index=1
  u = f32[2,2] get-tuple-element(svd), index=2
  vt = f32[2,2] get-tuple-element(svd), index=3
  sb = f32[2,2] broadcast(s), dimensions={1}
  us = f32[2,2] multiply(u, sb)
  back = f32[2,2] dot(us, vt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = f32[2,2] constant({{2, 1}, {1, 2}})
  eig = (f32[2,2], f32[2], s32[]) custom-call(h), custom_call_target="lapack_ssyevd_ffi", backend_config={mode = 86 : ui8, uplo = 76 : ui8}
  w = f32[2] get-tuple-element(eig), index=1
  l = f32[2,2] constant({{2, 0}, {1, 4}})
  r = f32[2,2] constant({{2, 4}, {6, 8}})
  one = f32[] constant(1)
  x2 = f32[2,2] custom-call(l, r), custom_call_target="lapack_strsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  x3 = f32[2,2] custom-call(l, r, one), custom_call_target="blas_strsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
  ROOT t = (f32[2], f32[2,2], f32[2], f32[2,2], f32[2,2]) tuple(s, back, w, x2, x3)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), Pointwise(DoubleNear(1e-6), {3.0, 2.0}));
  EXPECT_THAT(EvalValues(text, {}, 1), Pointwise(DoubleNear(1e-6), {3.0, 0.0, 0.0, -2.0}));
  EXPECT_THAT(EvalValues(text, {}, 2), Pointwise(DoubleNear(1e-6), {1.0, 3.0}));
  // [[2, 0], [1, 4]] x = [[2, 4], [6, 8]]: x = [[1, 2], [1.25, 1.5]].
  EXPECT_THAT(EvalValues(text, {}, 3), Pointwise(DoubleNear(1e-6), {1.0, 2.0, 1.25, 1.5}));
  EXPECT_EQ(EvalValues(text, {}, 3), EvalValues(text, {}, 4));
}

// geev of a rotation by 90 degrees: the conjugate pair +-i, positive
// imaginary part first as LAPACK gives it; its right eigenvectors have unit
// norm and a real largest component. Left eigenvectors asked for: opaque.
TEST(EvaluatorCustomCall, LapackGeevConjugatePairAndEigenvectors) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{0, -1}, {1, 0}})
  eig = (f32[2], f32[2], c64[2,2], c64[2,2], s32[]) custom-call(a), custom_call_target="lapack_sgeev_ffi", backend_config={compute_left = 78 : ui8, compute_right = 86 : ui8}
  wr = f32[2] get-tuple-element(eig), index=0
  wi = f32[2] get-tuple-element(eig), index=1
  vr = c64[2,2] get-tuple-element(eig), index=3
  mag = f32[2,2] abs(vr)
  ROOT t = (f32[2], f32[2], f32[2,2]) tuple(wr, wi, mag)
})";
  EXPECT_THAT(EvalValues(text, {}, 0), Pointwise(DoubleNear(1e-6), {0.0, 0.0}));
  EXPECT_THAT(EvalValues(text, {}, 1), Pointwise(DoubleNear(1e-6), {1.0, -1.0}));
  EXPECT_THAT(EvalValues(text, {}, 2), Each(DoubleNear(std::sqrt(0.5), 1e-6)));
  std::string left = text;
  left.replace(left.find("compute_left = 78"), 17, "compute_left = 86");
  // Opaque values stay within [-1, 1] and are not the pair's imaginary parts.
  EXPECT_NE(EvalValues(left, {}, 1), EvalValues(text, {}, 1));
}

// JAX 0.4.13 to 0.4.31 called the same kernels with sizes and flags as
// leading s32 operands and workspaces as extra results: each gives what
// today's call gives (the workspaces and geqrf's info are zeros).
TEST(EvaluatorCustomCall, LegacyLapackCallsComputeWhatTodaysDo) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[3,3] constant({{4, 1, 2}, {1, -3, 1}, {2, 1, 5}})
  b = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  zero = s32[] constant(0)
  one = s32[] constant(1)
  three = s32[] constant(3)
  two = s32[] constant(2)
  lwork = s32[] constant(64)
  alpha = f32[] constant(1)
  lu_new = (f32[3,3], s32[3], s32[]) custom-call(a), custom_call_target="lapack_sgetrf_ffi"
  lu_old = (f32[3,3], s32[3], s32[]) custom-call(one, three, three, a), custom_call_target="lapack_sgetrf"
  f_new = f32[3,3] get-tuple-element(lu_new), index=0
  f_old = f32[3,3] get-tuple-element(lu_old), index=0
  x_new = f32[3,2] custom-call(a, b), custom_call_target="lapack_strsm_ffi", backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8}
  x_old = f32[3,2] custom-call(one, zero, one, zero, three, two, one, alpha, a, b), custom_call_target="blas_strsm"
  svd_new = (f32[3,3], f32[3], f32[3,3], f32[3,3], s32[]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={mode = 83 : ui8}
  svd_old = (f32[3,3], f32[3], f32[3,3], f32[3,3], s32[], s32[24], f32[64]) custom-call(zero, one, one, three, three, lwork, a), custom_call_target="lapack_sgesdd"
  u_new = f32[3,3] get-tuple-element(svd_new), index=2
  u_old = f32[3,3] get-tuple-element(svd_old), index=2
  work = f32[64] get-tuple-element(svd_old), index=6
  eig_new = (f32[3,3], f32[3], s32[]) custom-call(a), custom_call_target="lapack_ssyevd_ffi", backend_config={mode = 86 : ui8, uplo = 85 : ui8}
  eig_old = (f32[3,3], f32[3], s32[], f32[64], s32[24]) custom-call(zero, one, three, a), custom_call_target="lapack_ssyevd"
  v_new = f32[3,3] get-tuple-element(eig_new), index=0
  v_old = f32[3,3] get-tuple-element(eig_old), index=0
  qr_new = (f32[3,3], f32[3]) custom-call(a), custom_call_target="lapack_sgeqrf_ffi"
  qr_old = (f32[3,3], f32[3], s32[], f32[64]) custom-call(one, three, three, lwork, a), custom_call_target="lapack_sgeqrf"
  r_new = f32[3,3] get-tuple-element(qr_new), index=0
  r_old = f32[3,3] get-tuple-element(qr_old), index=0
  taus = f32[3] get-tuple-element(qr_new), index=1
  q_new = f32[3,3] custom-call(r_new, taus), custom_call_target="lapack_sorgqr_ffi"
  q_tuple = (f32[3,3], s32[], f32[64]) custom-call(one, three, three, three, lwork, r_new, taus), custom_call_target="lapack_sorgqr"
  q_old = f32[3,3] get-tuple-element(q_tuple), index=0
  ROOT t = (f32[3,3], f32[3,3], f32[3,2], f32[3,2], f32[3,3], f32[3,3], f32[64], f32[3,3], f32[3,3], f32[3,3], f32[3,3], f32[3,3], f32[3,3]) tuple(f_new, f_old, x_new, x_old, u_new, u_old, work, v_new, v_old, r_new, r_old, q_new, q_old)
})";
  for (int i = 0; i < 12; i += 2) {
    const int today = i < 6 ? i : i + 1;  // index 6 is the workspace
    const std::vector<double> expected = EvalValues(text, {}, today);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(EvalValues(text, {}, today + 1), expected) << "output " << today + 1;
  }
  EXPECT_THAT(EvalValues(text, {}, 6), Each(0.0));
}

// A LAPACK call whose result does not fit its operand is an error that names
// the instruction and the target; one without the mode it needs stays opaque.
TEST(EvaluatorCustomCall, LapackBadShapesAreErrorsMissingModeIsOpaque) {
  for (const char* call :
       {"(f32[3,3], s32[2], s32[]) custom-call(a), custom_call_target=\"lapack_sgetrf_ffi\"",
        "(f32[3,3], f32[3], s32[3]) custom-call(a), custom_call_target=\"lapack_ssyevd_ffi\", "
        "backend_config={mode = 86 : ui8, uplo = 85 : ui8}",
        "(f32[3,3], f32[2], f32[3,3], f32[3,3], s32[]) custom-call(a), "
        "custom_call_target=\"lapack_sgesdd_ffi\", backend_config={mode = 65 : ui8}"}) {
    auto module = ParseModule(absl::StrCat(
        "HloModule m\nENTRY e {\n  a = f32[3,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 10}})\n"
        "  ROOT bad = ",
        call, "\n}\n"));
    ASSERT_TRUE(module.ok()) << module.status().message();
    auto r = Evaluate(**module, {});
    ASSERT_FALSE(r.ok()) << call;
    EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("bad: lapack_s")) << call;
  }
  // No mode: LAPACK's gesdd would not know what to compute; opaque values
  // (within [-1, 1]), not the singular values 3 and 2.
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{3, 0}, {0, -2}})
  svd = (f32[2,2], f32[2], f32[2,2], f32[2,2], s32[]) custom-call(a), custom_call_target="lapack_sgesdd_ffi"
  ROOT s = f32[2] get-tuple-element(svd), index=1
})";
  for (double x : EvalValues(text)) EXPECT_LE(std::fabs(x), 1.0);
}

TEST(EvaluatorCustomCall, UnknownVariantsStayOpaque) {
  // A potrf without its uplo attribute is not computed: it stays a
  // deterministic opaque value (within [-1, 1]), not the factor [2, 0, 1, 2].
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2] constant({{4, 0}, {2, 5}})
  p = (f32[2,2], s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi"
  ROOT f = f32[2,2] get-tuple-element(p), index=0
})";
  auto v = EvalValues(text);
  EXPECT_EQ(v, EvalValues(text));
  for (double x : v) EXPECT_LE(std::fabs(x), 1.0);
}

TEST(EvaluatorValues, ASmallArraySharedUnderAnotherShapeOutlivesItsSource) {
  // Small arrays live in their Value (Value::kInlineBytes): one shared under
  // another shape, as a reshape shares it, keeps its elements when the first
  // Value is freed and the next values take its memory.
  const Shape vector(PrimitiveType::kF32, {4});
  std::shared_ptr<eval::Value> source = eval::NewArray(vector);
  for (int i = 0; i < 4; ++i) source->mutable_as<float>()[i] = static_cast<float>(i + 1);
  const eval::ValuePtr shared = eval::ShareArray(source, Shape(PrimitiveType::kF32, {2, 2}));
  source.reset();
  std::vector<std::shared_ptr<eval::Value>> later;
  for (int n = 0; n < 16; ++n) {
    later.push_back(eval::NewArray(vector));
    std::fill_n(later.back()->mutable_as<float>(), 4, -1.0f);
  }
  EXPECT_THAT(std::vector<float>(shared->as<float>(), shared->as<float>() + 4),
              ElementsAre(1, 2, 3, 4));
}

TEST(EvaluatorValues, AnUpdateWritesInPlaceOnlyWhereNothingElseSeesTheArray) {
  const Shape shape(PrimitiveType::kF32, {64, 4});
  eval::ValuePtr alone = eval::NewArray(shape);
  const eval::Value* address = alone.get();
  EXPECT_EQ(eval::OverwritableCopy(alone, shape).get(), address);
  // Another reference to the Value, or to its buffer, or another shape: a copy.
  eval::ValuePtr also = alone;
  EXPECT_NE(eval::OverwritableCopy(alone, shape).get(), address);
  also.reset();
  eval::ValuePtr reshaped = eval::ShareArray(alone, Shape(PrimitiveType::kF32, {256}));
  EXPECT_NE(eval::OverwritableCopy(alone, shape).get(), address);
  reshaped.reset();
  Shape laid_out = shape;
  laid_out.SetDefaultLayout();
  EXPECT_NE(eval::OverwritableCopy(alone, laid_out).get(), address);
  EXPECT_EQ(eval::OverwritableCopy(alone, shape).get(), address);
}

// A loop that writes row i of a buffer (through a call, as lax.scan's stacked outputs are
// written) while the state also keeps the buffer as it was before the write; the entry's argument
// is the first buffer, and a constant is updated each iteration. The updates may go in place only
// where nothing else holds the array: the kept buffer, the argument and the constant stay as they
// were.
TEST(Evaluator, UpdatesInLoopsLeaveEveryOtherHolderOfTheArrayAsItWas) {
  constexpr char kText[] = R"(HloModule m
write_row {
  buf = f32[8,4] parameter(0)
  row = f32[4] parameter(1)
  i = s32[] parameter(2)
  r = f32[1,4] reshape(row)
  zero = s32[] constant(0)
  ROOT d = f32[8,4] dynamic-update-slice(buf, r, i, zero)
}
cond {
  p = (s32[], f32[8,4], f32[8,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
body {
  p = (s32[], f32[8,4], f32[8,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[8,4] get-tuple-element(p), index=1
  fi = f32[] convert(i)
  row = f32[4] broadcast(fi), dimensions={}
  d = f32[8,4] call(buf, row, i), to_apply=write_row
  zeros = f32[8] constant({0, 0, 0, 0, 0, 0, 0, 0})
  one = f32[1] constant({1})
  marked = f32[8] dynamic-update-slice(zeros, one, i)
  zero = f32[] constant(0)
  ones = f32[] reduce(marked, zero), dimensions={0}, to_apply=add
  count = f32[] get-tuple-element(p), index=3
  counted = f32[] add(count, ones)
  step = s32[] constant(1)
  j = s32[] add(i, step)
  ROOT t = (s32[], f32[8,4], f32[8,4], f32[]) tuple(j, d, buf, counted)
}
ENTRY e {
  x = f32[8,4] parameter(0)
  z = s32[] constant(0)
  c = f32[] constant(0)
  init = (s32[], f32[8,4], f32[8,4], f32[]) tuple(z, x, x, c)
  w = (s32[], f32[8,4], f32[8,4], f32[]) while(init), condition=cond, body=body
  final = f32[8,4] get-tuple-element(w), index=1
  before = f32[8,4] get-tuple-element(w), index=2
  count = f32[] get-tuple-element(w), index=3
  ROOT r = (f32[8,4], f32[8,4], f32[8,4], f32[]) tuple(final, before, x, count)
}
)";
  std::vector<double> x(32);
  for (int i = 0; i < 32; ++i) x[i] = 100 + i;
  const std::vector<Literal> args = {MakeLiteral("f32[8,4]", x)};
  auto result = EvalText(kText, args);
  ASSERT_TRUE(result.ok()) << result.status();
  const Literal& final = result->tuple_elements()[0];
  const Literal& before = result->tuple_elements()[1];
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(final.GetAsDouble(i), i / 4) << i;
    // The state before the last write: rows 0 to 6 written, row 7 the argument's.
    EXPECT_EQ(before.GetAsDouble(i), i < 28 ? i / 4 : 100 + i) << i;
    EXPECT_EQ(result->tuple_elements()[2].GetAsDouble(i), 100 + i) << i;
  }
  // One element of the constant marked per iteration, never the earlier ones.
  EXPECT_EQ(result->tuple_elements()[3].GetAsDouble(0), 8);
}

// The same through a conditional, as JAX lowers lax.cond: each branch gets its own tuple of the
// same values, the taken branch writes row i (the even one i, the odd one -i), and the state keeps
// the buffer as it was before the write.
TEST(Evaluator, UpdatesInConditionalBranchesLeaveEveryOtherHolderOfTheArrayAsItWas) {
  constexpr char kText[] = R"(HloModule m
even_branch {
  p = (f32[8,4], f32[4], s32[]) parameter(0)
  buf = f32[8,4] get-tuple-element(p), index=0
  row = f32[4] get-tuple-element(p), index=1
  i = s32[] get-tuple-element(p), index=2
  r = f32[1,4] reshape(row)
  zero = s32[] constant(0)
  ROOT d = f32[8,4] dynamic-update-slice(buf, r, i, zero)
}
odd_branch {
  p = (f32[8,4], f32[4], s32[]) parameter(0)
  buf = f32[8,4] get-tuple-element(p), index=0
  row = f32[4] get-tuple-element(p), index=1
  i = s32[] get-tuple-element(p), index=2
  minus = f32[4] negate(row)
  r = f32[1,4] reshape(minus)
  zero = s32[] constant(0)
  ROOT d = f32[8,4] dynamic-update-slice(buf, r, i, zero)
}
cond {
  p = (s32[], f32[8,4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8,4], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[8,4] get-tuple-element(p), index=1
  fi = f32[] convert(i)
  row = f32[4] broadcast(fi), dimensions={}
  two = s32[] constant(2)
  rem = s32[] remainder(i, two)
  zero = s32[] constant(0)
  even = pred[] compare(rem, zero), direction=EQ
  a = (f32[8,4], f32[4], s32[]) tuple(buf, row, i)
  b = (f32[8,4], f32[4], s32[]) tuple(buf, row, i)
  d = f32[8,4] conditional(even, a, b), true_computation=even_branch, false_computation=odd_branch
  step = s32[] constant(1)
  j = s32[] add(i, step)
  ROOT t = (s32[], f32[8,4], f32[8,4]) tuple(j, d, buf)
}
ENTRY e {
  x = f32[8,4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8,4], f32[8,4]) tuple(z, x, x)
  w = (s32[], f32[8,4], f32[8,4]) while(init), condition=cond, body=body
  final = f32[8,4] get-tuple-element(w), index=1
  before = f32[8,4] get-tuple-element(w), index=2
  ROOT r = (f32[8,4], f32[8,4], f32[8,4]) tuple(final, before, x)
}
)";
  std::vector<double> x(32);
  for (int i = 0; i < 32; ++i) x[i] = 100 + i;
  const std::vector<Literal> args = {MakeLiteral("f32[8,4]", x)};
  auto result = EvalText(kText, args);
  ASSERT_TRUE(result.ok()) << result.status();
  for (int i = 0; i < 32; ++i) {
    const int row = i / 4;
    const double written = row % 2 == 0 ? row : -row;
    EXPECT_EQ(result->tuple_elements()[0].GetAsDouble(i), written) << i;
    EXPECT_EQ(result->tuple_elements()[1].GetAsDouble(i), i < 28 ? written : 100 + i) << i;
    EXPECT_EQ(result->tuple_elements()[2].GetAsDouble(i), 100 + i) << i;
  }
}

TEST(EvaluatorMemoryLimit, InstructionOverTheLimitIsNamedNotAllocated) {
  auto module = ParseModule(R"(HloModule grow
ENTRY e {
  x = f32[256] parameter(0)
  ROOT b = f32[256,256,64] broadcast(x), dimensions={0}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const int64_t live_before = eval::LiveArrayBytes();
  auto args = MakeRandomArguments(**module, 0);
  ASSERT_TRUE(args.ok()) << args.status();
  EvaluatorOptions options;
  options.max_bytes = 4 << 20;  // the broadcast needs 16 MiB
  auto result = Evaluate(**module, *args, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("instruction b (broadcast): f32[256,256,64] needs 0.0156 GiB"));
  {
    options.max_bytes = 64 << 20;
    auto fits = Evaluate(**module, *args, options);
    ASSERT_TRUE(fits.ok()) << fits.status();
  }
  // Freed values leave the process-wide count (so one failure does not
  // poison later evaluations).
  args->clear();
  EXPECT_EQ(eval::LiveArrayBytes(), live_before);
}

TEST(EvaluatorMemoryLimit, ArgumentsOverTheLimitAreNamed) {
  auto module = ParseModule(R"(HloModule huge
ENTRY e {
  x = f32[100000,100000,100000] parameter(0)
  ROOT s = f32[100000,100000,100000] add(x, x)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  auto args = MakeRandomArguments(**module, 0);
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(args.status().message()),
              ::testing::HasSubstr("parameter x (f32[100000,100000,100000]) needs"));
  // CheckEquivalent reports it as the same error instead of allocating.
  auto same = CheckEquivalent(**module, **module);
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.status().code(), absl::StatusCode::kResourceExhausted);
}

// A module split for several partitions runs one copy per partition: each
// sees its own partition-id and its own data (the arguments rotated by its
// index), and the collectives with a channel_id combine every copy's operand
// over their groups; partition 0's result is returned. Without a channel_id
// a collective is cross-replica, over the one replica: its operand.
TEST(EvaluatorPartitions, CopiesExchangeThroughTheirCollectives) {
  const std::string module = R"(HloModule m, num_partitions=4
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY e {
  x = f32[2] parameter(0)
  id = u32[] partition-id()
  idf = f32[] convert(id)
  b = f32[2] broadcast(idf), dimensions={}
  y = f32[2] add(x, b)
  gathered = f32[8] all-gather(y), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  pairs = f32[2] all-reduce(y), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum
  mine = f32[2] all-reduce(y), to_apply=%sum
  scattered = f32[1] reduce-scatter(y), channel_id=3, replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=%sum
  variadic = (f32[2], f32[2]) all-reduce(y, y), channel_id=4, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%sum
  v0 = f32[2] get-tuple-element(variadic), index=0
  ROOT t = (f32[8], f32[2], f32[2], f32[1], f32[2]) tuple(gathered, pairs, mine, scattered, v0)
}
)";
  const std::vector<Literal> x = {MakeLiteral("f32[2]", {1, 2})};
  // Partition p holds x rotated by p, plus p: {1,2}, {3,2}, {3,4}, {5,4}.
  EXPECT_THAT(EvalValues(module, x, 0), ElementsAre(1, 2, 3, 2, 3, 4, 5, 4));
  EXPECT_THAT(EvalValues(module, x, 1), ElementsAre(4, 4));
  EXPECT_THAT(EvalValues(module, x, 2), ElementsAre(1, 2));
  EXPECT_THAT(EvalValues(module, x, 3), ElementsAre(4));
  // A variadic all-reduce reduces each operand (it returned them as they were).
  EXPECT_THAT(EvalValues(module, x, 4), ElementsAre(12, 12));
  // Groups that leave partitions out are an error, not a hang.
  std::string partial = module;
  partial.replace(partial.find("{{0,1},{2,3}}, dimensions"), 13, "{{0,1}}");
  absl::StatusOr<Literal> failed = EvalText(partial, x);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), ::testing::HasSubstr("in no replica group"));
}

// A module written for several replicas (pmap, PyTorch/XLA's data-parallel and
// ZeRO steps) runs one copy per replica: every collective crosses them, with a
// channel_id or not, and replica-id (not partition-id) is the copy's index.
// Replica r holds x rotated by r, plus r: {1,2}, {3,2}. One replica alone could
// not compute the all-gather or the reduce-scatter, and took the all-reduces
// for their operands.
TEST(EvaluatorPartitions, ReplicasExchangeThroughEveryCollective) {
  const std::string module = R"(HloModule m, replica_count=2
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY e {
  x = f32[2] parameter(0)
  id = u32[] replica-id()
  part = u32[] partition-id()
  idf = f32[] convert(id)
  b = f32[2] broadcast(idf), dimensions={}
  y = f32[2] add(x, b)
  gathered = f32[4] all-gather(y), replica_groups={}, dimensions={0}
  summed = f32[2] all-reduce(y), replica_groups={{0,1}}, to_apply=%sum
  scattered = f32[1] reduce-scatter(y), channel_id=1, replica_groups={{0,1}}, dimensions={0}, to_apply=%sum
  twice = f32[2] add(y, y)
  both = (f32[2], f32[2]) all-reduce(y, twice), replica_groups={}, to_apply=%sum
  start = f32[2] all-reduce-start(y), replica_groups={}, to_apply=%sum
  done = f32[2] all-reduce-done(start)
  ROOT t = (f32[4], f32[2], f32[1], (f32[2], f32[2]), u32[], f32[2]) tuple(gathered, summed, scattered, both, part, done)
}
)";
  const std::vector<Literal> x = {MakeLiteral("f32[2]", {1, 2})};
  EXPECT_THAT(EvalValues(module, x, 0), ElementsAre(1, 2, 3, 2));
  EXPECT_THAT(EvalValues(module, x, 1), ElementsAre(4, 4));
  EXPECT_THAT(EvalValues(module, x, 2), ElementsAre(4));
  absl::StatusOr<Literal> result = EvalText(module, x);
  ASSERT_TRUE(result.ok()) << result.status();
  const Literal& both = result->tuple_elements()[3];
  ASSERT_EQ(both.tuple_elements().size(), 2u);
  EXPECT_EQ(both.tuple_elements()[0].GetAsDouble(0), 4);     // the variadic all-reduce, element by
  EXPECT_EQ(both.tuple_elements()[1].GetAsDouble(1), 8);     // element
  EXPECT_EQ(result->tuple_elements()[4].GetAsDouble(0), 0);  // partition-id: one partition
  // The asynchronous all-reduce (its start and done) sums as the synchronous
  // one does, as async-collective-replacer assumes.
  EXPECT_THAT(EvalValues(module, x, 5), ElementsAre(4, 4));
}

// An all-to-all across partitions: each copy sends part i of its operand (split
// along the dimension) to copy i and joins what it receives in copy order. It
// used to return its operand unchanged, as one partition alone would.
TEST(EvaluatorPartitions, AllToAllExchangesParts) {
  const std::string module = R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4] parameter(0)
  id = u32[] partition-id()
  idf = f32[] convert(id)
  ten = f32[] constant(10)
  scaled = f32[] multiply(idf, ten)
  b = f32[4] broadcast(scaled), dimensions={}
  y = f32[4] add(x, b)
  ROOT exchanged = f32[4] all-to-all(y), channel_id=1, replica_groups={{0,1}}, dimensions={0}
}
)";
  // Partition 0 holds {1,2,3,4}; partition 1, x rotated by one plus 10: {14,11,12,13}.
  // Partition 0 receives the first halves: its own, then partition 1's.
  const std::vector<Literal> x = {MakeLiteral("f32[4]", {1, 2, 3, 4})};
  EXPECT_THAT(EvalValues(module, x), ElementsAre(1, 2, 14, 11));
  // The tuple form XLA's all_to_all_decomposer writes: operand i goes to copy
  // i, and result j is what copy j sent.
  const std::string tuple_form = R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4] parameter(0)
  id = u32[] partition-id()
  idf = f32[] convert(id)
  ten = f32[] constant(10)
  scaled = f32[] multiply(idf, ten)
  b = f32[4] broadcast(scaled), dimensions={}
  y = f32[4] add(x, b)
  first = f32[2] slice(y), slice={[0:2]}
  second = f32[2] slice(y), slice={[2:4]}
  exchanged = (f32[2], f32[2]) all-to-all(first, second), channel_id=1, replica_groups={{0,1}}
  mine = f32[2] get-tuple-element(exchanged), index=0
  theirs = f32[2] get-tuple-element(exchanged), index=1
  ROOT joined = f32[4] concatenate(mine, theirs), dimensions={0}
}
)";
  EXPECT_THAT(EvalValues(tuple_form, x), ElementsAre(1, 2, 14, 11));
}

}  // namespace
}  // namespace hlogym
