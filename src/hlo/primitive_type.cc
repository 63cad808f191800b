#include "hlo/primitive_type.h"

#include <array>
#include <cstdint>

namespace hlogym {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array kTypes = {
    TypeInfo{PrimitiveType::kPred, "pred", 8},
    TypeInfo{PrimitiveType::kS1, "s1", 1},
    TypeInfo{PrimitiveType::kS2, "s2", 2},
    TypeInfo{PrimitiveType::kS4, "s4", 4},
    TypeInfo{PrimitiveType::kS8, "s8", 8},
    TypeInfo{PrimitiveType::kS16, "s16", 16},
    TypeInfo{PrimitiveType::kS32, "s32", 32},
    TypeInfo{PrimitiveType::kS64, "s64", 64},
    TypeInfo{PrimitiveType::kU1, "u1", 1},
    TypeInfo{PrimitiveType::kU2, "u2", 2},
    TypeInfo{PrimitiveType::kU4, "u4", 4},
    TypeInfo{PrimitiveType::kU8, "u8", 8},
    TypeInfo{PrimitiveType::kU16, "u16", 16},
    TypeInfo{PrimitiveType::kU32, "u32", 32},
    TypeInfo{PrimitiveType::kU64, "u64", 64},
    TypeInfo{PrimitiveType::kF16, "f16", 16},
    TypeInfo{PrimitiveType::kBF16, "bf16", 16},
    TypeInfo{PrimitiveType::kF32, "f32", 32},
    TypeInfo{PrimitiveType::kF64, "f64", 64},
    TypeInfo{PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    TypeInfo{PrimitiveType::kF8E3M4, "f8e3m4", 8},
    TypeInfo{PrimitiveType::kF8E4M3, "f8e4m3", 8},
    TypeInfo{PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    TypeInfo{PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    TypeInfo{PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    TypeInfo{PrimitiveType::kF8E5M2, "f8e5m2", 8},
    TypeInfo{PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    TypeInfo{PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    TypeInfo{PrimitiveType::kC64, "c64", 64},
    TypeInfo{PrimitiveType::kC128, "c128", 128},
    TypeInfo{PrimitiveType::kTuple, "tuple", 0},
    TypeInfo{PrimitiveType::kToken, "token", 0},
    TypeInfo{PrimitiveType::kOpaque, "opaque", 0},
};

// Position in kTypes by enumerator (-1: none): BitWidth and ByteWidth are asked per element
// in the evaluator's loops, so the look-up is an index, not a search.
constexpr auto kTypeIndex = [] {
  std::array<int8_t, 256> index{};
  index.fill(-1);
  for (size_t i = 0; i < kTypes.size(); ++i) index[static_cast<uint8_t>(kTypes[i].type)] = i;
  return index;
}();

const TypeInfo* Find(PrimitiveType type) {
  const int8_t i = kTypeIndex[static_cast<uint8_t>(type)];
  return i < 0 ? nullptr : &kTypes[i];
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  const TypeInfo* info = Find(type);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

bool IsSignedIntegralType(PrimitiveType type) {
  return type >= PrimitiveType::kS1 && type <= PrimitiveType::kS64;
}

bool IsUnsignedIntegralType(PrimitiveType type) {
  return type >= PrimitiveType::kU1 && type <= PrimitiveType::kU64;
}

bool IsIntegralType(PrimitiveType type) {
  return IsSignedIntegralType(type) || IsUnsignedIntegralType(type);
}

bool IsFloatingPointType(PrimitiveType type) {
  return type >= PrimitiveType::kF16 && type <= PrimitiveType::kF8E8M0FNU;
}

bool IsNarrowFloatType(PrimitiveType type) {
  return type >= PrimitiveType::kF4E2M1FN && type <= PrimitiveType::kF8E8M0FNU;
}

bool IsComplexType(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

int BitWidth(PrimitiveType type) {
  const TypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

int ByteWidth(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits == 0 ? 0 : (bits + 7) / 8;
}

std::optional<FloatFormat> FloatFormatOf(PrimitiveType type) {
  using Nan = FloatFormat::NanEncoding;
  switch (type) {
    case PrimitiveType::kF16:
      return FloatFormat{5, 10, 15, true, Nan::kIeee, true, true};
    case PrimitiveType::kBF16:
      return FloatFormat{8, 7, 127, true, Nan::kIeee, true, true};
    case PrimitiveType::kF32:
      return FloatFormat{8, 23, 127, true, Nan::kIeee, true, true};
    case PrimitiveType::kF64:
      return FloatFormat{11, 52, 1023, true, Nan::kIeee, true, true};
    case PrimitiveType::kF4E2M1FN:
      return FloatFormat{2, 1, 1, false, Nan::kNone, true, true};
    case PrimitiveType::kF8E3M4:
      return FloatFormat{3, 4, 3, true, Nan::kIeee, true, true};
    case PrimitiveType::kF8E4M3:
      return FloatFormat{4, 3, 7, true, Nan::kIeee, true, true};
    case PrimitiveType::kF8E4M3FN:
      return FloatFormat{4, 3, 7, false, Nan::kAllOnes, true, true};
    case PrimitiveType::kF8E4M3B11FNUZ:
      return FloatFormat{4, 3, 11, false, Nan::kNegativeZero, true, true};
    case PrimitiveType::kF8E4M3FNUZ:
      return FloatFormat{4, 3, 8, false, Nan::kNegativeZero, true, true};
    case PrimitiveType::kF8E5M2:
      return FloatFormat{5, 2, 15, true, Nan::kIeee, true, true};
    case PrimitiveType::kF8E5M2FNUZ:
      return FloatFormat{5, 2, 16, false, Nan::kNegativeZero, true, true};
    case PrimitiveType::kF8E8M0FNU:
      return FloatFormat{8, 0, 127, false, Nan::kAllOnes, false, false};
    default:
      return std::nullopt;
  }
}

bool CastPreservesValues(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (from == PrimitiveType::kPred) return true;
  if (to == PrimitiveType::kPred) return false;
  if (IsComplexType(from)) {
    return IsComplexType(to) && BitWidth(to) >= BitWidth(from);
  }
  if (IsComplexType(to)) {
    PrimitiveType part = to == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    return CastPreservesValues(from, part);
  }
  if (IsIntegralType(from)) {
    const int from_bits = BitWidth(from);
    if (IsIntegralType(to)) {
      const int to_bits = BitWidth(to);
      if (IsSignedIntegralType(from) == IsSignedIntegralType(to)) return to_bits >= from_bits;
      // unsigned -> signed needs one more bit; signed -> unsigned loses negatives.
      return IsUnsignedIntegralType(from) && to_bits > from_bits;
    }
    std::optional<FloatFormat> format = FloatFormatOf(to);
    if (!format || !format->has_sign) return false;
    const int value_bits = IsSignedIntegralType(from) ? from_bits - 1 : from_bits;
    return format->mantissa_bits + 1 >= value_bits;
  }
  if (IsFloatingPointType(from)) {
    if (!IsFloatingPointType(to)) return false;
    std::optional<FloatFormat> a = FloatFormatOf(from);
    std::optional<FloatFormat> b = FloatFormatOf(to);
    if (!a || !b) return false;
    // Wider exponent and mantissa, and at least the special values.
    if (b->exponent_bits < a->exponent_bits || b->mantissa_bits < a->mantissa_bits) return false;
    if (a->has_infinity && !b->has_infinity) return false;
    if (a->nan != FloatFormat::NanEncoding::kNone && b->nan == FloatFormat::NanEncoding::kNone) {
      return false;
    }
    if (a->has_sign && !b->has_sign) return false;
    // Same exponent width but different bias loses range.
    if (b->exponent_bits == a->exponent_bits && b->exponent_bias != a->exponent_bias) {
      return false;
    }
    return true;
  }
  return false;
}

}  // namespace hlogym
