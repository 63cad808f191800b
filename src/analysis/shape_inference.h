// Result-shape inference per opcode, following the rules of XLA's
// ShapeInference (xla/service/shape_inference.cc) as HloVerifier applies them
// to HLO (no implicit broadcasting). Every function returns the shape an
// instruction must have (without layout), or InvalidArgument whose message
// gives the reason and the shapes involved. Dynamic dimensions are treated by
// their bounds; their dynamic flags are not inferred.
#ifndef HLOGYM_ANALYSIS_SHAPE_INFERENCE_H_
#define HLOGYM_ANALYSIS_SHAPE_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/attributes.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace hlogym {

// Elementwise unary ops (not convert, bitcast-convert, reduce-precision).
absl::StatusOr<Shape> InferUnaryShape(Opcode opcode, const Shape& operand);
// Elementwise binary ops; operands must have the same dimensions.
absl::StatusOr<Shape> InferBinaryShape(Opcode opcode, const Shape& lhs, const Shape& rhs);
absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true,
                                       const Shape& on_false);
absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max);
absl::StatusOr<Shape> InferConvertShape(const Shape& operand, PrimitiveType new_type);
absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type);

// HLO broadcast: `dimensions[i]` is the result dimension operand dimension i
// maps to.
absl::StatusOr<Shape> InferBroadcastShape(const Shape& operand,
                                          std::span<const int64_t> result_dims,
                                          std::span<const int64_t> dimensions);
absl::StatusOr<Shape> InferReshapeShape(const Shape& operand, std::span<const int64_t> result_dims);
absl::StatusOr<Shape> InferTransposeShape(const Shape& operand,
                                          std::span<const int64_t> permutation);
absl::StatusOr<Shape> InferReverseShape(const Shape& operand, std::span<const int64_t> dimensions);
absl::StatusOr<Shape> InferSliceShape(const Shape& operand, std::span<const SliceDimension> slice);
absl::StatusOr<Shape> InferDynamicSliceShape(const Shape& operand,
                                             std::span<const Shape> start_indices,
                                             std::span<const int64_t> slice_sizes);
absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const Shape& operand, const Shape& update,
                                                   std::span<const Shape> start_indices);
absl::StatusOr<Shape> InferConcatenateShape(std::span<const Shape> operands, int64_t dimension);
absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& padding_value,
                                    std::span<const PaddingDimension> padding);
absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums, PrimitiveType result_type);
absl::StatusOr<Shape> InferConvolutionShape(const Shape& lhs, const Shape& rhs,
                                            const ConvolutionDimensionNumbers& dnums,
                                            const Window& window, int64_t feature_group_count,
                                            int64_t batch_group_count, PrimitiveType result_type);
// Output dimensions of a window applied to `dims` (reduce-window,
// select-and-scatter, convolution spatial dimensions).
absl::StatusOr<std::vector<int64_t>> InferWindowOutputDims(std::span<const int64_t> dims,
                                                           const Window& window);
absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const GatherDimensionNumbers& dnums,
                                       std::span<const int64_t> slice_sizes);
// Validates updates against operands/indices; the result is the operand
// shape (a tuple for several operands), with element types from `to_apply`.
absl::StatusOr<Shape> InferScatterShape(std::span<const Shape> operands,
                                        const Shape& scatter_indices,
                                        std::span<const Shape> updates,
                                        const ScatterDimensionNumbers& dnums,
                                        const Computation* to_apply);
// Variadic reduce: inputs, then as many init values.
absl::StatusOr<Shape> InferReduceShape(std::span<const Shape> inputs, std::span<const Shape> inits,
                                       std::span<const int64_t> dimensions,
                                       const Computation* to_apply);
absl::StatusOr<Shape> InferReduceWindowShape(std::span<const Shape> inputs,
                                             std::span<const Shape> inits, const Window& window,
                                             const Computation* to_apply);

// The shape `instruction` must have given its operands, attributes and
// called computations; nullopt when the opcode leaves the shape free (custom
// call, parameter, infeed, ...) or when it involves unbounded dynamic
// dimensions. Errors do not name the instruction (the caller does).
absl::StatusOr<std::optional<Shape>> InferShape(const Instruction& instruction);

}  // namespace hlogym

#endif  // HLOGYM_ANALYSIS_SHAPE_INFERENCE_H_
