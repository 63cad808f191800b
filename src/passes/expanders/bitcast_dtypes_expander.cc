#include "passes/expanders/bitcast_dtypes_expander.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/shape_inference.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/pass_utils.h"

namespace hlogym {
namespace {

std::optional<PrimitiveType> UnsignedOfWidth(int bits) {
  switch (bits) {
    case 1:
      return PrimitiveType::kU1;
    case 2:
      return PrimitiveType::kU2;
    case 4:
      return PrimitiveType::kU4;
    case 8:
      return PrimitiveType::kU8;
    case 16:
      return PrimitiveType::kU16;
    case 32:
      return PrimitiveType::kU32;
    case 64:
      return PrimitiveType::kU64;
    default:
      return std::nullopt;
  }
}

// bitcast-convert to `type`; `input` itself when it already has that type.
absl::StatusOr<Instruction*> BitcastTo(Instruction* input, PrimitiveType type) {
  if (input->shape().element_type() == type) return input;
  HLOGYM_ASSIGN(shape, InferBitcastConvertShape(input->shape(), type));
  auto bitcast = std::make_unique<Instruction>(Opcode::kBitcastConvert, shape);
  bitcast->AppendOperand(input);
  return AddWithLayoutOf(input->parent(), std::move(bitcast), input);
}

// convert to `type`; `input` itself when it already has that type.
absl::StatusOr<Instruction*> ConvertTo(Instruction* input, PrimitiveType type) {
  if (input->shape().element_type() == type) return input;
  return MakeConvert(input, type);
}

absl::StatusOr<Instruction*> ConstantLike(Instruction* like, uint64_t value) {
  const Shape& shape = like->shape();
  Literal literal(Shape::Scalar(shape.element_type()));
  literal.SetFromUint64(0, value);
  Instruction* scalar = MakeConstant(like->parent(), std::move(literal), shape.has_layout());
  if (shape.IsScalar()) return scalar;
  return MakeBroadcast(scalar, shape.dimensions(), {});
}

absl::StatusOr<Instruction*> Narrow(Instruction* input, int in_bits, int out_bits,
                                    PrimitiveType in_logical, PrimitiveType out_logical) {
  const Shape& shape = input->shape();
  std::vector<int64_t> dims = shape.dimensions();
  dims.push_back(in_bits / out_bits);
  std::vector<int64_t> map(shape.rank());
  for (int64_t i = 0; i < shape.rank(); ++i) map[i] = i;
  HLOGYM_ASSIGN(broadcast, MakeBroadcast(input, dims, map));
  HLOGYM_ASSIGN(logical, BitcastTo(broadcast, in_logical));
  auto iota = std::make_unique<Instruction>(Opcode::kIota, Shape(in_logical, dims));
  iota->mutable_attrs().iota_dimension = shape.rank();
  Instruction* piece = AddWithLayoutOf(input->parent(), std::move(iota), input);
  HLOGYM_ASSIGN(width, ConstantLike(logical, out_bits));
  HLOGYM_ASSIGN(shift, MakeBinary(Opcode::kMultiply, width, piece));
  HLOGYM_ASSIGN(shifted, MakeBinary(Opcode::kShiftRightLogical, logical, shift));
  HLOGYM_ASSIGN(mask, ConstantLike(logical, (uint64_t{1} << out_bits) - 1));
  HLOGYM_ASSIGN(masked, MakeBinary(Opcode::kAnd, shifted, mask));
  return ConvertTo(masked, out_logical);
}

absl::StatusOr<Instruction*> Widen(Instruction* input, int in_bits, int out_bits,
                                   PrimitiveType in_logical, PrimitiveType out_logical) {
  const int64_t factor = out_bits / in_bits;
  if (IsFloatingPointType(input->shape().element_type())) {
    HLOGYM_ASSIGN(logical, BitcastTo(input, in_logical));
    input = logical;
  }
  const int64_t rank = input->shape().rank();
  Instruction* collapsed = input;
  if (rank > 1) {
    std::vector<int64_t> dims(input->shape().dimensions().begin(),
                              input->shape().dimensions().end() - 1);
    dims.back() *= input->shape().dimensions().back();
    HLOGYM_ASSIGN(reshape, MakeReshape(input, dims));
    collapsed = reshape;
  }
  const std::vector<int64_t>& collapsed_dims = collapsed->shape().dimensions();
  std::vector<SliceDimension> slice(collapsed_dims.size());
  for (size_t d = 0; d < collapsed_dims.size(); ++d) {
    slice[d].start = 0;
    slice[d].limit = collapsed_dims[d];
    slice[d].stride = 1;
  }
  Instruction* accumulated = nullptr;
  for (int64_t i = 0; i < factor; ++i) {
    slice.back().start = i;
    slice.back().limit = collapsed_dims.back() - factor + i + 1;
    slice.back().stride = factor;
    HLOGYM_ASSIGN(sliced, MakeSlice(collapsed, slice));
    HLOGYM_ASSIGN(bits, BitcastTo(sliced, in_logical));
    HLOGYM_ASSIGN(wide, ConvertTo(bits, out_logical));
    if (i == 0) {
      accumulated = wide;
      continue;
    }
    HLOGYM_ASSIGN(amount, ConstantLike(wide, static_cast<uint64_t>(i * in_bits)));
    HLOGYM_ASSIGN(shifted, MakeBinary(Opcode::kShiftLeft, wide, amount));
    HLOGYM_ASSIGN(merged, MakeBinary(Opcode::kOr, accumulated, shifted));
    accumulated = merged;
  }
  if (rank > 1) return accumulated;
  return MakeReshape(accumulated, {});
}

bool Matches(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kBitcastConvert || instruction->operand_count() != 1 ||
      !instruction->shape().IsArray() || !instruction->operand(0)->shape().IsArray()) {
    return false;
  }
  const PrimitiveType in = instruction->operand(0)->shape().element_type();
  const PrimitiveType out = instruction->shape().element_type();
  return !IsComplexType(in) && !IsComplexType(out) && BitWidth(in) != BitWidth(out);
}

absl::StatusOr<Instruction*> Expand(Instruction* bitcast) {
  Instruction* input = bitcast->operand(0);
  const int in_bits = BitWidth(input->shape().element_type());
  const int out_bits = BitWidth(bitcast->shape().element_type());
  auto in_logical = UnsignedOfWidth(in_bits);
  auto out_logical = UnsignedOfWidth(out_bits);
  auto shape = InferBitcastConvertShape(input->shape(), bitcast->shape().element_type());
  if (!in_logical || !out_logical || !shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(bitcast->name(), ": cannot expand bitcast-convert from ",
                     input->shape().ToString(false), " to ", bitcast->shape().ToString(false)));
  }
  HLOGYM_ASSIGN(logical, in_bits > out_bits
                             ? Narrow(input, in_bits, out_bits, *in_logical, *out_logical)
                             : Widen(input, in_bits, out_bits, *in_logical, *out_logical));
  HLOGYM_ASSIGN(result, BitcastTo(logical, bitcast->shape().element_type()));
  result->set_shape(bitcast->shape());
  return result;
}

}  // namespace

bool BitcastDtypesExpander::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kBitcastConvert});
}

absl::StatusOr<bool> BitcastDtypesExpander::Run(Module& module) {
  return ExpandMatchingInstructions(module, name(), Matches, Expand);
}

}  // namespace hlogym
