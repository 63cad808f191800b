#include "passes/types/operand_upcaster.h"

#include <tuple>
#include <vector>

#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "passes/builders.h"
#include "passes/cpu_library_support.h"

namespace hlogym {
namespace {

// The ordering key of HigherPrecisionType; larger is more precise.
std::tuple<bool, int, int, int, bool> PrecisionKey(PrimitiveType type) {
  const bool complex = IsComplexType(type);
  PrimitiveType component = type;
  if (type == PrimitiveType::kC64) component = PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) component = PrimitiveType::kF64;
  int overflow_exponent = -1;
  int significand = -1;
  if (auto format = FloatFormatOf(component)) {
    const int all_ones = (1 << format->exponent_bits) - 1;
    // The largest finite exponent, plus one: formats without infinities use
    // the all-ones exponent for finite values unless it encodes NaN alone.
    const bool all_ones_finite = !format->has_infinity && format->mantissa_bits > 0;
    overflow_exponent = (all_ones_finite ? all_ones : all_ones - 1) - format->exponent_bias + 1;
    significand = format->mantissa_bits + 1;
  }
  return {complex, overflow_exponent, significand, BitWidth(component),
          IsSignedIntegralType(component)};
}

bool IsDotOrConvolution(const Instruction* instruction) {
  return (instruction->opcode() == Opcode::kDot || instruction->opcode() == Opcode::kConvolution) &&
         instruction->operand_count() == 2 && instruction->shape().IsArray() &&
         instruction->operand(0)->shape().IsArray() && instruction->operand(1)->shape().IsArray();
}

bool Matches(const Instruction* instruction) {
  if (!IsDotOrConvolution(instruction)) return false;
  const PrimitiveType lhs = instruction->operand(0)->shape().element_type();
  const PrimitiveType rhs = instruction->operand(1)->shape().element_type();
  const PrimitiveType result = instruction->shape().element_type();
  const PrimitiveType inferred = HigherPrecisionType(lhs, rhs);
  if (lhs == inferred && rhs == inferred && result == inferred) return false;
  // The result type must be an upcast of the inferred one.
  return HigherPrecisionType(inferred, result) == result;
}

}  // namespace

PrimitiveType HigherPrecisionType(PrimitiveType a, PrimitiveType b) {
  if (a == b) return a;
  return PrecisionKey(a) >= PrecisionKey(b) ? a : b;
}

absl::StatusOr<bool> OperandUpcaster::Run(Module& module) {
  std::vector<Instruction*> matched;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (Matches(instruction.get()) && !(cpu_library_filter_ && YnnTakesDot(*instruction))) {
        matched.push_back(instruction.get());
      }
    }
  }
  bool changed = false;
  for (Instruction* instruction : matched) {
    const PrimitiveType type = instruction->shape().element_type();
    for (int64_t i : {0, 1}) {
      Instruction* operand = instruction->operand(i);
      if (operand->shape().element_type() == type) continue;
      HLOGYM_ASSIGN(convert, MakeConvert(operand, type));
      instruction->ReplaceOperandWith(i, convert);
      changed = true;
    }
  }
  return changed;
}

bool OperandUpcaster::MayChange(const Module& module) const {
  return ContainsOpcode(module, {Opcode::kDot, Opcode::kConvolution});
}

}  // namespace hlogym
