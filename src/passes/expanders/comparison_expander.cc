#include "passes/expanders/comparison_expander.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "hlo/primitive_type.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/change_tracking.h"

namespace hlogym {
namespace {

std::optional<PrimitiveType> SignedTypeOfWidth(int bits) {
  switch (bits) {
    case 8:
      return PrimitiveType::kS8;
    case 16:
      return PrimitiveType::kS16;
    case 32:
      return PrimitiveType::kS32;
    case 64:
      return PrimitiveType::kS64;
    default:
      return std::nullopt;
  }
}

bool IsCandidate(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCompare ||
      instruction.attrs().comparison_type != ComparisonType::kTotalOrder) {
    return false;
  }
  PrimitiveType type = instruction.operand(0)->shape().element_type();
  return IsFloatingPointType(type) && !IsNarrowFloatType(type) &&
         SignedTypeOfWidth(BitWidth(type)).has_value();
}

absl::StatusOr<Instruction*> Expand(Instruction* compare) {
  Computation* computation = compare->parent();
  Instruction* lhs = compare->operand(0);
  Instruction* rhs = compare->operand(1);
  int bits = BitWidth(lhs->shape().element_type());
  PrimitiveType int_type = *SignedTypeOfWidth(bits);
  Shape int_shape = lhs->shape();
  int_shape.set_element_type(int_type);
  bool layout = lhs->shape().has_layout();
  // Like XLA, every splat is a broadcast, a scalar one (dimensions={}) included, so the op
  // counts match XLA's output exactly.
  auto splat = [&](int64_t value) -> absl::StatusOr<Instruction*> {
    Literal literal(Shape::Scalar(int_type));
    literal.SetFromInt64(0, value);
    return MakeBroadcast(MakeConstant(computation, std::move(literal), layout),
                         int_shape.dimensions(), {});
  };
  const int64_t max_value =
      bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  // XLA's expansion also materializes the minimum of the integer type, which nothing uses; it
  // stays in the module as dead code (the pass does not clean up after itself), and so does it
  // here, to keep the op counts equal to XLA's.
  HLOGYM_RETURN_IF_ERROR(splat(-max_value - 1).status());
  HLOGYM_ASSIGN(zero, splat(0));
  HLOGYM_ASSIGN(max, splat(max_value));
  auto key = [&](Instruction* operand) -> absl::StatusOr<Instruction*> {
    auto cast = std::make_unique<Instruction>(Opcode::kBitcastConvert, int_shape, "");
    cast->AppendOperand(operand);
    Instruction* bits_value = AddWithLayoutOf(computation, std::move(cast), operand);
    HLOGYM_ASSIGN(flipped, MakeBinary(Opcode::kXor, max, bits_value));
    HLOGYM_ASSIGN(negative, MakeCompare(ComparisonDirection::kLt, bits_value, zero));
    return MakeSelect(negative, flipped, bits_value);
  };
  HLOGYM_ASSIGN(lhs_key, key(lhs));
  HLOGYM_ASSIGN(rhs_key, key(rhs));
  return MakeCompare(compare->attrs().comparison_direction, lhs_key, rhs_key);
}

}  // namespace

bool ComparisonExpander::MayChange(const Module& module) const {
  return ContainsInstruction(module, Opcode::kCompare, IsCandidate);
}

absl::StatusOr<bool> ComparisonExpander::Run(Module& module) {
  TrackedRun run(module, std::string(name()));
  std::vector<Instruction*> compares;
  for (const auto& computation : module.computations()) {
    if (!run.MustVisit(*computation)) continue;
    for (const auto& instruction : computation->instructions()) {
      if (IsCandidate(*instruction)) compares.push_back(instruction.get());
    }
  }
  for (Instruction* compare : compares) {
    HLOGYM_ASSIGN(expanded, Expand(compare));
    expanded->mutable_attrs().raw = compare->attrs().raw;
    HLOGYM_RETURN_IF_ERROR(compare->parent()->ReplaceInstruction(compare, expanded));
  }
  run.Complete();
  return !compares.empty();
}

}  // namespace hlogym
