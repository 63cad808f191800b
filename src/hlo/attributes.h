// Structured attributes that instructions carry: windows, dimension numbers,
// slices, padding, comparison settings. Plain data; text conversion lives in
// src/text.
#ifndef HLOGYM_HLO_ATTRIBUTES_H_
#define HLOGYM_HLO_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hlogym {

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;   // "rhs_dilate" in text
  int64_t base_dilation = 1;     // "lhs_dilate" in text
  bool window_reversal = false;  // "rhs_reversal" in text
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

// Text form "b01f_01io->b01f".
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct RaggedDotDimensionNumbers {
  std::vector<int64_t> lhs_ragged_dimensions;
  std::vector<int64_t> rhs_group_dimensions;
  bool operator==(const RaggedDotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

// One dimension of `slice={[start:limit:stride], ...}`.
struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

// One dimension of `padding=low_high_interior x ...`.
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
std::string_view ComparisonDirectionName(ComparisonDirection direction);  // "EQ"
std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name);

// `type=` of compare; kUnset when not written (then derived from the
// element type).
enum class ComparisonType : uint8_t { kUnset, kFloat, kTotalOrder, kSigned, kUnsigned };
std::string_view ComparisonTypeName(ComparisonType type);  // "TOTALORDER"
std::optional<ComparisonType> ComparisonTypeFromName(std::string_view name);

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
std::string_view FusionKindName(FusionKind kind);  // "kLoop"
std::optional<FusionKind> FusionKindFromName(std::string_view name);

enum class RandomDistribution : uint8_t { kUniform, kNormal };
std::string_view RandomDistributionName(RandomDistribution d);  // "rng_uniform"
std::optional<RandomDistribution> RandomDistributionFromName(std::string_view name);

enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
std::string_view RandomAlgorithmName(RandomAlgorithm a);  // "rng_default"
std::optional<RandomAlgorithm> RandomAlgorithmFromName(std::string_view name);
// The algorithm rng_default stands for on XLA's CPU backend (Philox); read by
// the evaluator and by rng-bit-generator-expander, which must agree.
RandomAlgorithm ResolveRngAlgorithm(RandomAlgorithm algorithm);

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
std::string_view FftTypeName(FftType type);  // "FFT"
std::optional<FftType> FftTypeFromName(std::string_view name);

enum class TriangularSolveTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };
std::string_view TriangularSolveTransposeName(TriangularSolveTranspose t);  // "NO_TRANSPOSE"
std::optional<TriangularSolveTranspose> TriangularSolveTransposeFromName(std::string_view name);

// One entry of `operand_precision={default,highest}`.
enum class Precision : uint8_t { kDefault, kHigh, kHighest, kPackedNibble };
std::string_view PrecisionName(Precision p);  // "default"
std::optional<Precision> PrecisionFromName(std::string_view name);

// An attribute kept exactly as written: `key=value`, value verbatim.
struct RawAttribute {
  std::string key;
  std::string value;
  bool operator==(const RawAttribute&) const = default;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_ATTRIBUTES_H_
