#include "passes/expanders/stochastic_convert_decomposer.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

// A constant `value` of `like`'s element type, broadcast to its shape.
absl::StatusOr<Instruction*> ScalarLike(Instruction* like, double value) {
  const Shape& shape = like->shape();
  Instruction* scalar =
      MakeScalarConstant(like->parent(), shape.element_type(), value, shape.has_layout());
  if (shape.IsScalar()) return scalar;
  return MakeBroadcast(scalar, shape.dimensions(), {});
}

// An integer constant `value` of `like`'s (integer) type, broadcast to its
// shape (exact for 64-bit limits, which a double cannot carry).
absl::StatusOr<Instruction*> IntegerLike(Instruction* like, int64_t value) {
  const Shape& shape = like->shape();
  Instruction* scalar = MakeConstant(like->parent(), Literal::Scalar(shape.element_type(), value),
                                     shape.has_layout());
  if (shape.IsScalar()) return scalar;
  return MakeBroadcast(scalar, shape.dimensions(), {});
}

absl::StatusOr<Instruction*> Decompose(Instruction* convert) {
  if (convert->operand_count() != 2 || !convert->shape().IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat(convert->name(), ": stochastic-convert needs two array operands"));
  }
  Instruction* operand = convert->operand(0);
  Instruction* random = convert->operand(1);
  const PrimitiveType from = operand->shape().element_type();
  const PrimitiveType random_type = random->shape().element_type();
  const PrimitiveType to = convert->shape().element_type();
  if (!IsFloatingPointType(from) || !IsUnsignedIntegralType(random_type) ||
      BitWidth(random_type) != BitWidth(from) ||
      !operand->shape().SameDimensions(random->shape()) ||
      !operand->shape().SameDimensions(convert->shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat(convert->name(),
                     ": stochastic-convert needs a float operand and unsigned random bits "
                     "of the same width and shape, got ",
                     operand->shape().ToString(false), " and ", random->shape().ToString(false)));
  }
  if (!IsSignedIntegralType(to)) {
    return absl::UnimplementedError(absl::StrCat(
        convert->name(),
        ": stochastic_convert_decomposer only handles conversions to signed "
        "integers, not ",
        std::string(PrimitiveTypeName(from)), " to ", std::string(PrimitiveTypeName(to))));
  }
  HLOGYM_ASSIGN(sign, MakeUnary(Opcode::kSign, operand));
  HLOGYM_ASSIGN(zero, ScalarLike(sign, 0));
  HLOGYM_ASSIGN(negative, MakeCompare(ComparisonDirection::kLt, sign, zero));
  HLOGYM_ASSIGN(magnitude, MakeUnary(Opcode::kAbs, operand));
  HLOGYM_ASSIGN(truncated, MakeUnary(Opcode::kFloor, magnitude));
  HLOGYM_ASSIGN(fraction, MakeBinary(Opcode::kSubtract, magnitude, truncated));
  if (from == PrimitiveType::kF16) {
    HLOGYM_ASSIGN(wide, MakeConvert(fraction, PrimitiveType::kF32));
    fraction = wide;
  }
  HLOGYM_ASSIGN(scale, ScalarLike(fraction, std::ldexp(1.0, BitWidth(random_type))));
  HLOGYM_ASSIGN(fixed, MakeBinary(Opcode::kMultiply, fraction, scale));
  HLOGYM_ASSIGN(fixed_bits, MakeConvert(fixed, random_type));
  HLOGYM_ASSIGN(round_up, MakeCompare(ComparisonDirection::kLt, random, fixed_bits));
  HLOGYM_ASSIGN(truncated_int, MakeConvert(truncated, to));
  HLOGYM_ASSIGN(one, ScalarLike(truncated_int, 1));
  HLOGYM_ASSIGN(incremented, MakeBinary(Opcode::kAdd, truncated_int, one));
  HLOGYM_ASSIGN(rounded, MakeSelect(round_up, incremented, truncated_int));
  HLOGYM_ASSIGN(negated, MakeUnary(Opcode::kNegate, rounded));
  HLOGYM_ASSIGN(signed_result, MakeSelect(negative, negated, rounded));
  const int bits = BitWidth(to);
  const int64_t max = static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
  const int64_t min = -max - 1;
  HLOGYM_ASSIGN(min_float, ScalarLike(operand, static_cast<double>(min)));
  HLOGYM_ASSIGN(is_min, MakeCompare(ComparisonDirection::kLe, operand, min_float));
  HLOGYM_ASSIGN(min_int, IntegerLike(signed_result, min));
  HLOGYM_ASSIGN(clamped_low, MakeSelect(is_min, min_int, signed_result));
  HLOGYM_ASSIGN(max_float, ScalarLike(operand, static_cast<double>(max)));
  HLOGYM_ASSIGN(is_max, MakeCompare(ComparisonDirection::kGe, operand, max_float));
  HLOGYM_ASSIGN(max_int, IntegerLike(clamped_low, max));
  HLOGYM_ASSIGN(result, MakeSelect(is_max, max_int, clamped_low));
  result->set_shape(convert->shape());
  return result;
}

}  // namespace

absl::StatusOr<bool> StochasticConvertDecomposer::Run(Module& module) {
  return ExpandMatchingInstructions(
      module, name(),
      [](const Instruction* instruction) {
        return instruction->opcode() == Opcode::kStochasticConvert;
      },
      Decompose);
}

bool StochasticConvertDecomposer::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kStochasticConvert});
}

}  // namespace hlogym
