// stochastic_convert_decomposer: stochastic-convert to signed integers as
// elementwise ops (checked on hand-picked inputs: the evaluator has no
// stochastic-convert of its own).
#include "eval/evaluator.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr std::string_view kF32ToS32 = R"(HloModule m
ENTRY main {
  x = f32[5] parameter(0)
  r = u32[5] parameter(1)
  ROOT c = s32[5] stochastic-convert(x, r)
}
)";

TEST(StochasticConvertDecomposerTest, DecomposesAndRoundsByTheRandomBits) {
  PassRun run = RunPass("stochastic_convert_decomposer", kF32ToS32);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[] constant(2147483647)
CHECK: s32[] constant(-2147483648)
CHECK: sign(f32[5] %x)
CHECK: abs(f32[5] %x)
CHECK: floor(
CHECK: f32[] constant(4.2949673e+09)
CHECK: u32[5] convert(
CHECK: compare(u32[5] %r, {{.*}}), direction=LT
CHECK: ROOT {{.*}} select(
CHECK-NOT: stochastic-convert
)");
  ASSERT_NE(run.module, nullptr);
  Literal x(Shape(PrimitiveType::kF32, {5}));
  Literal r(Shape(PrimitiveType::kU32, {5}));
  const double xs[] = {1.25, -1.75, 2.0, 1e10, -1e10};
  const uint64_t rs[] = {0, 0xFFFFFFFFu, 5, 0, 0};
  for (int i = 0; i < 5; ++i) {
    x.SetFromDouble(i, xs[i]);
    r.SetFromUint64(i, rs[i]);
  }
  auto result = Evaluate(*run.module, {x, r});
  ASSERT_TRUE(result.ok()) << result.status();
  // 1.25: a fraction above random 0 rounds up; -1.75: no random value is
  // below the largest one, so the magnitude rounds down; integers stay;
  // out-of-range values saturate.
  const int64_t expected[] = {2, -1, 2, 2147483647, -2147483648LL};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(result->GetAsInt64(i), expected[i]) << "element " << i;
}

TEST(StochasticConvertDecomposerTest, F16GoesThroughF32ForTheScale) {
  PassRun run = RunPass("stochastic_convert_decomposer", R"(HloModule m
ENTRY main {
  x = f16[3] parameter(0)
  r = u16[3] parameter(1)
  ROOT c = s16[3] stochastic-convert(x, r)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[3] convert(f16[3]
CHECK: f32[] constant(65536)
CHECK: u16[3] convert(f32[3]
)");
}

TEST(StochasticConvertDecomposerTest, UnsignedTargetIsAnError) {
  auto module = ParseModule(R"(HloModule m
ENTRY main {
  x = f32[2] parameter(0)
  r = u32[2] parameter(1)
  ROOT c = u32[2] stochastic-convert(x, r)
}
)",
                            "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto pass = PassRegistry::Builtin().Create("stochastic_convert_decomposer");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  EXPECT_FALSE(changed.ok());
}

TEST(StochasticConvertDecomposerTest, NoStochasticConvertNoChange) {
  PassRun run = RunPass("stochastic_convert_decomposer", R"(HloModule m
ENTRY main {
  x = f32[2] parameter(0)
  ROOT c = s32[2] convert(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
