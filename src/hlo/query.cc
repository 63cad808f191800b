#include "hlo/query.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "hlo/float_bits.h"

namespace hlogym {

namespace {

int64_t HeaderInteger(const Module& module, std::string_view key) {
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key != key) continue;
    int64_t value = 0;
    if (absl::SimpleAtoi(attr.value, &value) && value > 0) return value;
  }
  return 1;
}

}  // namespace

int64_t ReplicaCount(const Module& module) { return HeaderInteger(module, "replica_count"); }
int64_t NumPartitions(const Module& module) { return HeaderInteger(module, "num_partitions"); }
bool UsesSpmdPartitioning(const Module& module) {
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key == "use_spmd_partitioning") return attr.value == "true";
  }
  // XLA's text does not print it: a module compiled for several partitions
  // (jax.jit over a mesh, PyTorch/XLA's SPMD) is partitioned so.
  return NumPartitions(module) > 1;
}

bool SameEntrySignature(const Module& a, const Module& b) {
  const Computation* ea = a.entry_computation();
  const Computation* eb = b.entry_computation();
  if (ea == nullptr || eb == nullptr) return ea == eb;
  if (ea->num_parameters() != eb->num_parameters()) return false;
  for (int64_t i = 0; i < ea->num_parameters(); ++i) {
    if (!ea->parameter_instruction(i)->shape().Compatible(eb->parameter_instruction(i)->shape())) {
      return false;
    }
  }
  return ea->root_instruction()->shape().Compatible(eb->root_instruction()->shape());
}

bool ContainsOpcode(const Module& module, std::span<const Opcode> opcodes) {
  for (const auto& computation : module.computations()) {
    for (Opcode opcode : opcodes) {
      if (computation->opcode_count(opcode) > 0) return true;
    }
  }
  return false;
}

bool HasDynamicShapes(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!instruction->shape().is_static()) return true;
    }
  }
  return false;
}

bool ContainsInstruction(const Module& module, Opcode opcode,
                         absl::FunctionRef<bool(const Instruction&)> predicate) {
  for (const auto& computation : module.computations()) {
    if (computation->opcode_count(opcode) == 0) continue;
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == opcode && predicate(*instruction)) return true;
    }
  }
  return false;
}

bool SideEffectCache::ComputationHasSideEffect(const Computation* computation) {
  if (computation == nullptr) return false;
  if (auto it = memo_.find(computation); it != memo_.end()) return it->second;
  memo_[computation] = false;  // HLO call graphs are acyclic; guards bad input
  bool has = false;
  for (const auto& instruction : computation->instructions()) {
    if (HasSideEffect(instruction.get())) {
      has = true;
      break;
    }
  }
  memo_[computation] = has;
  return has;
}

bool SideEffectCache::HasSideEffect(const Instruction* instruction) {
  if (instruction->HasSideEffect()) return true;
  for (const Computation* callee : instruction->called_computations()) {
    if (ComputationHasSideEffect(callee)) return true;
  }
  return false;
}

bool ComputationHasSideEffect(const Computation& computation) {
  return SideEffectCache().ComputationHasSideEffect(&computation);
}

namespace {

const Instruction* UnwrapBroadcasts(const Instruction* hlo) {
  while (hlo->opcode() == Opcode::kBroadcast) hlo = hlo->operand(0);
  return hlo;
}

// Every element of the constant satisfies `pred(literal, index)`.
template <typename Pred>
bool AllElements(const Instruction* hlo, Pred pred) {
  hlo = UnwrapBroadcasts(hlo);
  if (!IsReadableArrayConstant(hlo)) return false;
  const Literal& literal = hlo->literal();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    if (!pred(literal, i)) return false;
  }
  return true;
}

}  // namespace

bool IsReadableArrayConstant(const Instruction* hlo) {
  return hlo->opcode() == Opcode::kConstant && hlo->attrs().literal != nullptr &&
         !hlo->literal().elided() && hlo->shape().IsArray();
}

bool IsAll(const Instruction* hlo, double value) {
  hlo = UnwrapBroadcasts(hlo);
  if (!IsReadableArrayConstant(hlo)) return false;
  return hlo->literal().IsAll(value);
}

bool IsAllLowest(const Instruction* hlo) {
  const Instruction* c = UnwrapBroadcasts(hlo);
  if (!IsReadableArrayConstant(c)) return false;
  const PrimitiveType type = c->shape().element_type();
  if (IsSignedIntegralType(type)) {
    const int64_t lowest = BitWidth(type) >= 64 ? std::numeric_limits<int64_t>::min()
                                                : -(int64_t{1} << (BitWidth(type) - 1));
    return AllElements(c, [&](const Literal& l, int64_t i) { return l.GetAsInt64(i) == lowest; });
  }
  if (IsUnsignedIntegralType(type)) {
    return AllElements(c, [](const Literal& l, int64_t i) { return l.GetAsUint64(i) == 0; });
  }
  if (type == PrimitiveType::kPred) {
    return AllElements(c, [](const Literal& l, int64_t i) { return !l.GetAsBool(i); });
  }
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (format && format->has_infinity) {
    return AllElements(c, [](const Literal& l, int64_t i) {
      double v = l.GetAsDouble(i);
      return std::isinf(v) && v < 0;
    });
  }
  return false;
}

bool IsAllHighest(const Instruction* hlo) {
  const Instruction* c = UnwrapBroadcasts(hlo);
  if (!IsReadableArrayConstant(c)) return false;
  const PrimitiveType type = c->shape().element_type();
  const int width = BitWidth(type);
  if (IsSignedIntegralType(type)) {
    const int64_t highest =
        width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1;
    return AllElements(c, [&](const Literal& l, int64_t i) { return l.GetAsInt64(i) == highest; });
  }
  if (IsUnsignedIntegralType(type)) {
    const uint64_t highest =
        width >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << width) - 1;
    return AllElements(c, [&](const Literal& l, int64_t i) { return l.GetAsUint64(i) == highest; });
  }
  if (type == PrimitiveType::kPred) {
    return AllElements(c, [](const Literal& l, int64_t i) { return l.GetAsBool(i); });
  }
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (format && format->has_infinity) {
    return AllElements(c, [](const Literal& l, int64_t i) {
      double v = l.GetAsDouble(i);
      return std::isinf(v) && v > 0;
    });
  }
  return false;
}

bool IsEffectiveScalarConstant(const Instruction* hlo) {
  return IsReadableArrayConstant(hlo) && hlo->shape().ElementCount() == 1;
}

std::optional<double> ScalarConstantValue(const Instruction* hlo) {
  if (!IsEffectiveScalarConstant(hlo)) return std::nullopt;
  const PrimitiveType type = hlo->shape().element_type();
  if (IsFloatingPointType(type)) return hlo->literal().GetAsDouble(0);
  if (IsIntegralType(type)) return static_cast<double>(hlo->literal().GetAsInt64(0));
  if (type == PrimitiveType::kPred) return hlo->literal().GetAsBool(0) ? 1.0 : 0.0;
  return std::nullopt;
}

const Instruction* UnwrapBroadcastOfConstant(const Instruction* hlo) {
  if (hlo->opcode() == Opcode::kBroadcast) hlo = hlo->operand(0);
  return IsEffectiveScalarConstant(hlo) ? hlo : nullptr;
}

namespace {

bool IsComplexOrNotReal(const Instruction* hlo) {
  for (const Instruction* operand : hlo->operands()) {
    if (IsComplexType(operand->shape().element_type())) return true;
  }
  return IsComplexType(hlo->shape().element_type());
}

bool IsPositive(const Instruction* hlo) {
  if (IsComplexOrNotReal(hlo)) return false;
  const PrimitiveType type = hlo->shape().element_type();
  switch (hlo->opcode()) {
    case Opcode::kPower:
      if (IsSignedIntegralType(type)) return false;
      return IsPositive(hlo->operand(0));
    case Opcode::kAbs:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
      return IsPositive(hlo->operand(0));
    case Opcode::kMultiply:
      if (IsSignedIntegralType(type)) return false;
      return hlo->operand(0) == hlo->operand(1) && IsPositive(hlo->operand(0));
    default:
      return false;
  }
}

}  // namespace

bool IsNonNegative(const Instruction* hlo) {
  if (IsComplexOrNotReal(hlo)) return false;
  const PrimitiveType type = hlo->shape().element_type();
  switch (hlo->opcode()) {
    case Opcode::kMultiply:
      return hlo->operand(0) == hlo->operand(1) && !IsSignedIntegralType(type);
    case Opcode::kExp:
      return true;
    case Opcode::kIota: {
      if (!IsSignedIntegralType(type)) return true;
      const int width = BitWidth(type);
      if (width >= 64) return true;
      const uint64_t limit = uint64_t{1} << (width - 1);
      return static_cast<uint64_t>(hlo->shape().dimensions(hlo->attrs().iota_dimension)) <= limit;
    }
    case Opcode::kAbs:
      if (!IsSignedIntegralType(type)) return true;
      return IsNonNegative(hlo->operand(0));
    case Opcode::kBroadcast:
      return IsNonNegative(hlo->operand(0));
    case Opcode::kConstant: {
      std::optional<double> value = ScalarConstantValue(hlo);
      return value && !std::signbit(*value) && !std::isnan(*value);
    }
    case Opcode::kMinimum:
      return IsNonNegative(hlo->operand(0)) && IsNonNegative(hlo->operand(1));
    case Opcode::kMaximum:
      return IsNonNegative(hlo->operand(0)) || IsNonNegative(hlo->operand(1));
    case Opcode::kPower:
      return !IsSignedIntegralType(type) && IsNonNegative(hlo->operand(0));
    case Opcode::kSelect:
      return IsNonNegative(hlo->operand(1)) && IsNonNegative(hlo->operand(2));
    default:
      return IsPositive(hlo);
  }
}

}  // namespace hlogym
