#include "hlo/attributes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hlogym {
namespace {

// Each enum's names, in enum order, as XLA prints them; FromName inverts
// Name for every value.
template <typename Enum, typename NameFn, typename FromNameFn>
void ExpectNames(const std::vector<std::string>& names, NameFn name_fn, FromNameFn from_name_fn) {
  for (size_t i = 0; i < names.size(); ++i) {
    const Enum value = static_cast<Enum>(i);
    EXPECT_EQ(name_fn(value), names[i]);
    auto parsed = from_name_fn(names[i]);
    ASSERT_TRUE(parsed.has_value()) << names[i];
    EXPECT_EQ(*parsed, value) << names[i];
  }
}

TEST(Attributes, ComparisonDirection) {
  ExpectNames<ComparisonDirection>({"EQ", "NE", "GE", "GT", "LE", "LT"}, ComparisonDirectionName,
                                   ComparisonDirectionFromName);
  // XLA's parser is case-sensitive here.
  EXPECT_FALSE(ComparisonDirectionFromName("eq").has_value());
  EXPECT_FALSE(ComparisonDirectionFromName("Lt").has_value());
  EXPECT_FALSE(ComparisonDirectionFromName("").has_value());
  EXPECT_FALSE(ComparisonDirectionFromName("EQUAL").has_value());
}

TEST(Attributes, ComparisonType) {
  EXPECT_EQ(ComparisonTypeName(ComparisonType::kFloat), "FLOAT");
  EXPECT_EQ(ComparisonTypeName(ComparisonType::kTotalOrder), "TOTALORDER");
  EXPECT_EQ(ComparisonTypeName(ComparisonType::kSigned), "SIGNED");
  EXPECT_EQ(ComparisonTypeName(ComparisonType::kUnsigned), "UNSIGNED");
  EXPECT_EQ(ComparisonTypeName(ComparisonType::kUnset), "");
  EXPECT_EQ(ComparisonTypeFromName("FLOAT"), ComparisonType::kFloat);
  EXPECT_EQ(ComparisonTypeFromName("TOTALORDER"), ComparisonType::kTotalOrder);
  EXPECT_EQ(ComparisonTypeFromName("SIGNED"), ComparisonType::kSigned);
  EXPECT_EQ(ComparisonTypeFromName("UNSIGNED"), ComparisonType::kUnsigned);
  EXPECT_FALSE(ComparisonTypeFromName("").has_value());  // kUnset is never parsed
  EXPECT_FALSE(ComparisonTypeFromName("float").has_value());
  EXPECT_FALSE(ComparisonTypeFromName("PARTIALORDER").has_value());
}

TEST(Attributes, FusionKind) {
  ExpectNames<FusionKind>({"kLoop", "kInput", "kOutput", "kCustom"}, FusionKindName,
                          FusionKindFromName);
  EXPECT_FALSE(FusionKindFromName("loop").has_value());
  EXPECT_FALSE(FusionKindFromName("kloop").has_value());
  EXPECT_FALSE(FusionKindFromName("Loop").has_value());
}

TEST(Attributes, Random) {
  ExpectNames<RandomDistribution>({"rng_uniform", "rng_normal"}, RandomDistributionName,
                                  RandomDistributionFromName);
  ExpectNames<RandomAlgorithm>({"rng_default", "rng_three_fry", "rng_philox"}, RandomAlgorithmName,
                               RandomAlgorithmFromName);
  EXPECT_FALSE(RandomDistributionFromName("RNG_UNIFORM").has_value());
  EXPECT_FALSE(RandomDistributionFromName("uniform").has_value());
  EXPECT_FALSE(RandomAlgorithmFromName("rng_threefry").has_value());
  EXPECT_FALSE(RandomAlgorithmFromName("RNG_PHILOX").has_value());
}

TEST(Attributes, FftType) {
  ExpectNames<FftType>({"FFT", "IFFT", "RFFT", "IRFFT"}, FftTypeName, FftTypeFromName);
  EXPECT_FALSE(FftTypeFromName("fft").has_value());
  EXPECT_FALSE(FftTypeFromName("IRfft").has_value());
}

TEST(Attributes, TriangularSolveTranspose) {
  ExpectNames<TriangularSolveTranspose>({"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"},
                                        TriangularSolveTransposeName,
                                        TriangularSolveTransposeFromName);
  EXPECT_FALSE(TriangularSolveTransposeFromName("no_transpose").has_value());
  EXPECT_FALSE(TriangularSolveTransposeFromName("TRANSPOSE_INVALID").has_value());
}

TEST(Attributes, Precision) {
  ExpectNames<Precision>({"default", "high", "highest", "packed_nibble"}, PrecisionName,
                         PrecisionFromName);
  EXPECT_FALSE(PrecisionFromName("DEFAULT").has_value());
  EXPECT_FALSE(PrecisionFromName("HIGHEST").has_value());
  EXPECT_FALSE(PrecisionFromName("packednibble").has_value());
}

TEST(Attributes, PlainDataEquality) {
  Window a{{WindowDimension{3, 2, 1, 1, 1, 1, false}}};
  Window b = a;
  EXPECT_EQ(a, b);
  b.dimensions[0].window_reversal = true;
  EXPECT_NE(a, b);
  EXPECT_EQ((SliceDimension{0, 4, 2}), (SliceDimension{0, 4, 2}));
  EXPECT_NE((PaddingDimension{1, 0, 0}), (PaddingDimension{0, 1, 0}));
}

}  // namespace
}  // namespace hlogym
