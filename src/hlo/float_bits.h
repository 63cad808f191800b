// Bit-level helpers for the real floating-point element types, shared by
// Literal and the text layer. DecodeFloatBits/EncodeFloatBits themselves are
// declared in hlo/literal.h (they are part of the Literal contract).
//
// Conventions (those of ml_dtypes / Eigen, which XLA uses):
//  - encoding rounds to nearest, ties to even, with subnormals;
//  - values that round above the largest finite value become inf when the
//    format has one, NaN for the "fn"/"fnuz"/e8m0fnu formats, and saturate to
//    +-max for f4e2m1fn (which has neither inf nor NaN);
//  - f16 and bf16 are encoded from doubles the way Eigen does it: first to
//    f32, then to the narrow type (so an f64 constant parsed by XLA gets the
//    same bits here);
//  - NaN payloads are kept (top bits) for the IEEE-style formats, so decode
//    followed by encode gives back every NaN code unchanged; the other
//    formats have one NaN code (per sign for "fn").
//  - f4e2m1fn has no NaN: encoding NaN gives 0x8 (-0), or 0x0 for a NaN with
//    the sign bit set, as ml_dtypes does; inf saturates to +-6.
//  - f8e8m0fnu has no sign and no zero: zero and values below 2^-127 encode
//    as 0x00 (2^-127), negative values as NaN (0xff).
#ifndef HLOGYM_HLO_FLOAT_BITS_H_
#define HLOGYM_HLO_FLOAT_BITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "hlo/primitive_type.h"

namespace hlogym {

// std::numeric_limits<T>::max_digits10 of the ml_dtypes/Eigen type (f32: 9,
// f16: 5, bf16: 4, f8e4m3fn: 3, f8e5m2: 2, f4e2m1fn: 2, ...); 0 for
// non-float types.
int FloatMaxDigits10(PrimitiveType type);

// True if `bits` encodes a NaN of the float type.
bool IsNanBits(PrimitiveType type, uint64_t bits);

// The NaN payload (explicit mantissa bits) of a NaN of an IEEE-style type
// (f16, bf16, f32, f64, f8e5m2, f8e4m3, f8e3m4); nullopt for other types.
std::optional<uint64_t> NanPayload(PrimitiveType type, uint64_t bits);

// The bits of a NaN of `type` with the given sign and, for IEEE-style types,
// payload (default: the quiet NaN without payload; a payload of 0 or one
// wider than the mantissa is invalid and gives nullopt). For types with a
// single NaN code the payload must be absent. nullopt for f4e2m1fn (no NaN)
// and non-float types.
std::optional<uint64_t> MakeNanBits(PrimitiveType type, bool negative,
                                    std::optional<uint64_t> payload = std::nullopt);

// XLA's text for one float element (xla::RoundTripFpToString): "%.6g" for f32
// when that reads back exactly (else "%.9g"), "%.15g"/"%.17g" for f64,
// "%.<max_digits10>g" for the other types; "inf", "-inf", "nan", "-nan", and
// "nan(0x..)" when an IEEE-style NaN carries a payload other than the quiet
// bit alone.
std::string FloatBitsToString(PrimitiveType type, uint64_t bits);

}  // namespace hlogym

#endif  // HLOGYM_HLO_FLOAT_BITS_H_
