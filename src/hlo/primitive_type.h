// Element types of XLA shapes, with the names XLA's text format uses.
#ifndef HLOGYM_HLO_PRIMITIVE_TYPE_H_
#define HLOGYM_HLO_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlogym {

enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  // Narrow floats, named as XLA names them (ml_dtypes formats).
  kF4E2M1FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E4M3FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kC64,
  kC128,
  kTuple,
  kToken,
  kOpaque,
};

// "f32", "pred", ...; "tuple" for kTuple.
std::string_view PrimitiveTypeName(PrimitiveType type);
// Inverse of PrimitiveTypeName; nullopt for an unknown name.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);

// Not tuple/token/opaque/invalid. Inline: every Shape::IsArray asks it.
inline bool IsArrayType(PrimitiveType type) {
  return type != PrimitiveType::kInvalid && type != PrimitiveType::kTuple &&
         type != PrimitiveType::kToken && type != PrimitiveType::kOpaque;
}
bool IsIntegralType(PrimitiveType type);  // signed or unsigned ints, not pred
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);  // real floats, narrow ones too
bool IsComplexType(PrimitiveType type);
bool IsNarrowFloatType(PrimitiveType type);  // the f8/f4 formats

// Bits per element as XLA counts them (pred is 8, s4 is 4, c64 is 64).
int BitWidth(PrimitiveType type);
// Bytes one element occupies in an unpacked literal (sub-byte types use 1).
int ByteWidth(PrimitiveType type);

// The parameters of a binary floating-point format, for the real float types.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;  // explicit fraction bits
  int exponent_bias;
  bool has_infinity;
  // How NaN is encoded: IEEE (all-ones exponent, nonzero mantissa),
  // "fn" (only all-ones exponent and mantissa), "fnuz" (the negative-zero
  // bit pattern), or none (f4e2m1fn has no NaN).
  enum class NanEncoding { kIeee, kAllOnes, kNegativeZero, kNone } nan;
  bool has_sign;  // f8e8m0fnu is unsigned
  bool has_zero;  // f8e8m0fnu has no zero
};
std::optional<FloatFormat> FloatFormatOf(PrimitiveType type);
// Whether converting `from` to `to` and back gives back every value.
bool CastPreservesValues(PrimitiveType from, PrimitiveType to);

}  // namespace hlogym

#endif  // HLOGYM_HLO_PRIMITIVE_TYPE_H_
