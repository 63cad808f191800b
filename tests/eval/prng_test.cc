// XLA's bit generators in the evaluator: the published known-answer blocks
// of Philox4x32-10 and ThreeFry2x32-20, the layout rng-bit-generator gives
// them (checked bit for bit against jaxlib in tests/python/test_xla_oracle.py),
// the state update, `rng` draws, and clear errors for what XLA rejects.
#include "eval/prng.h"

#include <algorithm>

#include "eval/evaluator.h"
#include "eval_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace hlogym {
namespace {

using ::testing::ElementsAre;
using testing::EvalText;
using testing::EvalValues;
using testing::Values;

TEST(PrngTest, PhiloxKnownAnswers) {
  EXPECT_THAT(eval::Philox4x32({0, 0, 0, 0}, {0, 0}),
              ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  EXPECT_THAT(eval::Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                               {0xffffffffu, 0xffffffffu}),
              ElementsAre(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  EXPECT_THAT(eval::Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                               {0xa4093822u, 0x299f31d0u}),
              ElementsAre(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

TEST(PrngTest, ThreeFryKnownAnswers) {
  EXPECT_THAT(eval::ThreeFry2x32({0, 0}, {0, 0}), ElementsAre(0x6b200159u, 0x99ba4efeu));
  EXPECT_THAT(eval::ThreeFry2x32({0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
              ElementsAre(0x1cb996fcu, 0xbb002be7u));
  EXPECT_THAT(eval::ThreeFry2x32({0x243f6a88u, 0x85a308d3u}, {0x13198a2eu, 0x03707344u}),
              ElementsAre(0xc4923a9cu, 0x483df7a0u));
}

std::string BitGen(const std::string& state, const std::string& state_shape,
                   const std::string& bits_shape, const std::string& algorithm) {
  return "HloModule m\nENTRY e {\n  s = " + state_shape + " constant(" + state + ")\n  ROOT r = (" +
         state_shape + ", " + bits_shape + ") rng-bit-generator(s), algorithm=" + algorithm +
         "\n}\n";
}

TEST(PrngTest, PhiloxLayoutAndState) {
  // u64[3] state: key 7, counter (5, 0). Elements 0..3 are block 5, 4..5 block 6.
  auto r = EvalText(BitGen("{7, 5, 0}", "u64[3]", "u32[6]", "rng_philox"));
  ASSERT_TRUE(r.ok()) << r.status();
  const auto w5 = eval::Philox4x32({5, 0, 0, 0}, {7, 0});
  const auto w6 = eval::Philox4x32({6, 0, 0, 0}, {7, 0});
  EXPECT_THAT(Values(r->tuple_elements()[1]),
              ElementsAre(w5[0], w5[1], w5[2], w5[3], w6[0], w6[1]));
  EXPECT_THAT(Values(r->tuple_elements()[0]), ElementsAre(7, 7, 0));  // two blocks used
}

TEST(PrngTest, PhiloxTwoWordStateUsesKeyAsHighCounterAndCarries) {
  // u64[2] state (key, low): the high counter word is the key. The low word
  // wraps inside the draw, carrying into the high word of the second block.
  auto r = EvalText(BitGen("{3, 18446744073709551615}", "u64[2]", "u32[8]", "rng_default"));
  ASSERT_TRUE(r.ok()) << r.status();
  const auto b0 = eval::Philox4x32({0xffffffffu, 0xffffffffu, 3, 0}, {3, 0});
  const auto b1 = eval::Philox4x32({0, 0, 4, 0}, {3, 0});
  EXPECT_THAT(Values(r->tuple_elements()[1]),
              ElementsAre(b0[0], b0[1], b0[2], b0[3], b1[0], b1[1], b1[2], b1[3]));
  EXPECT_THAT(Values(r->tuple_elements()[0]), ElementsAre(3, 1));
}

TEST(PrngTest, ThreeFrySplitsAlongFirstEvenDimension) {
  // u32[3,2]: split dimension 1 (size 2), half [3,1]: element (i, b) takes
  // word b of counter 9 + i.
  auto r = EvalText(BitGen("{1, 9}", "u64[2]", "u32[3,2]", "rng_three_fry"));
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> expected;
  for (uint32_t i = 0; i < 3; ++i) {
    const auto w = eval::ThreeFry2x32({9 + i, 0}, {1, 0});
    expected.push_back(w[0]);
    expected.push_back(w[1]);
  }
  EXPECT_EQ(Values(r->tuple_elements()[1]), expected);
  EXPECT_THAT(Values(r->tuple_elements()[0]), ElementsAre(1, 12));
}

TEST(PrngTest, RejectsStatesXlaRejects) {
  auto r = EvalText(BitGen("{1, 2, 3}", "u64[3]", "u32[4]", "rng_three_fry"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("u64[2]"), std::string::npos) << r.status();
  r = EvalText(BitGen("{1, 2, 3, 4}", "u32[4]", "u32[4]", "rng_philox"));
  EXPECT_FALSE(r.ok());
}

TEST(PrngTest, RngDrawsInRangeAndDependOnSeed) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(3)
  ROOT r = f32[64] rng(a, b), distribution=rng_uniform
}
)";
  auto first = EvalText(text);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::vector<double> v = Values(*first);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x >= 2 && x < 3; }));
  EXPECT_EQ(Values(*EvalText(text)), v);  // deterministic
  auto module = ParseModule(text, "t.hlo");
  ASSERT_TRUE(module.ok());
  EvaluatorOptions other_seed;
  other_seed.rng_seed = 7;
  auto second = Evaluate(**module, {}, other_seed);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(Values(*second), v);
}

TEST(PrngTest, RngIntegerUniformInRange) {
  auto r = EvalText(R"(HloModule m
ENTRY e {
  a = s32[] constant(-3)
  b = s32[] constant(4)
  ROOT r = s32[100] rng(a, b), distribution=rng_uniform
}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<double> v = Values(*r);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x >= -3 && x < 4; }));
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -3);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 3);
}

}  // namespace
}  // namespace hlogym
