// Names of the enum-valued attributes, spelled as XLA prints them. XLA's
// parser accepts exactly these spellings (case-sensitive: "EQ" but not "eq",
// "default" but not "DEFAULT"), and so do the FromName functions here.
#include "hlo/attributes.h"

#include <array>
#include <utility>

namespace hlogym {
namespace {

template <typename Enum, size_t N>
std::string_view NameOf(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "";
}

template <typename Enum, size_t N>
std::optional<Enum> FromNameIn(const std::array<std::pair<Enum, std::string_view>, N>& table,
                               std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

constexpr std::array<std::pair<ComparisonDirection, std::string_view>, 6> kDirections = {{
    {ComparisonDirection::kEq, "EQ"},
    {ComparisonDirection::kNe, "NE"},
    {ComparisonDirection::kGe, "GE"},
    {ComparisonDirection::kGt, "GT"},
    {ComparisonDirection::kLe, "LE"},
    {ComparisonDirection::kLt, "LT"},
}};

// kUnset has no name: it is never printed and never parsed.
constexpr std::array<std::pair<ComparisonType, std::string_view>, 4> kComparisonTypes = {{
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
}};

constexpr std::array<std::pair<FusionKind, std::string_view>, 4> kFusionKinds = {{
    {FusionKind::kLoop, "kLoop"},
    {FusionKind::kInput, "kInput"},
    {FusionKind::kOutput, "kOutput"},
    {FusionKind::kCustom, "kCustom"},
}};

constexpr std::array<std::pair<RandomDistribution, std::string_view>, 2> kDistributions = {{
    {RandomDistribution::kUniform, "rng_uniform"},
    {RandomDistribution::kNormal, "rng_normal"},
}};

constexpr std::array<std::pair<RandomAlgorithm, std::string_view>, 3> kAlgorithms = {{
    {RandomAlgorithm::kDefault, "rng_default"},
    {RandomAlgorithm::kThreeFry, "rng_three_fry"},
    {RandomAlgorithm::kPhilox, "rng_philox"},
}};

constexpr std::array<std::pair<FftType, std::string_view>, 4> kFftTypes = {{
    {FftType::kFft, "FFT"},
    {FftType::kIfft, "IFFT"},
    {FftType::kRfft, "RFFT"},
    {FftType::kIrfft, "IRFFT"},
}};

constexpr std::array<std::pair<TriangularSolveTranspose, std::string_view>, 3> kTransposes = {{
    {TriangularSolveTranspose::kNoTranspose, "NO_TRANSPOSE"},
    {TriangularSolveTranspose::kTranspose, "TRANSPOSE"},
    {TriangularSolveTranspose::kAdjoint, "ADJOINT"},
}};

constexpr std::array<std::pair<Precision, std::string_view>, 4> kPrecisions = {{
    {Precision::kDefault, "default"},
    {Precision::kHigh, "high"},
    {Precision::kHighest, "highest"},
    {Precision::kPackedNibble, "packed_nibble"},
}};

}  // namespace

std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  return NameOf(kDirections, direction);
}
std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name) {
  return FromNameIn(kDirections, name);
}

std::string_view ComparisonTypeName(ComparisonType type) { return NameOf(kComparisonTypes, type); }
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name) {
  return FromNameIn(kComparisonTypes, name);
}

std::string_view FusionKindName(FusionKind kind) { return NameOf(kFusionKinds, kind); }
std::optional<FusionKind> FusionKindFromName(std::string_view name) {
  return FromNameIn(kFusionKinds, name);
}

std::string_view RandomDistributionName(RandomDistribution d) { return NameOf(kDistributions, d); }
std::optional<RandomDistribution> RandomDistributionFromName(std::string_view name) {
  return FromNameIn(kDistributions, name);
}

std::string_view RandomAlgorithmName(RandomAlgorithm a) { return NameOf(kAlgorithms, a); }
std::optional<RandomAlgorithm> RandomAlgorithmFromName(std::string_view name) {
  return FromNameIn(kAlgorithms, name);
}
RandomAlgorithm ResolveRngAlgorithm(RandomAlgorithm algorithm) {
  return algorithm == RandomAlgorithm::kDefault ? RandomAlgorithm::kPhilox : algorithm;
}

std::string_view FftTypeName(FftType type) { return NameOf(kFftTypes, type); }
std::optional<FftType> FftTypeFromName(std::string_view name) {
  return FromNameIn(kFftTypes, name);
}

std::string_view TriangularSolveTransposeName(TriangularSolveTranspose t) {
  return NameOf(kTransposes, t);
}
std::optional<TriangularSolveTranspose> TriangularSolveTransposeFromName(std::string_view name) {
  return FromNameIn(kTransposes, name);
}

std::string_view PrecisionName(Precision p) { return NameOf(kPrecisions, p); }
std::optional<Precision> PrecisionFromName(std::string_view name) {
  return FromNameIn(kPrecisions, name);
}

}  // namespace hlogym
