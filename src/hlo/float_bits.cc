// Conversions between doubles and the bit patterns of every real float type.
// See hlo/float_bits.h for the conventions.
#include "hlo/float_bits.h"

#include <bit>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "hlo/literal.h"

namespace hlogym {
namespace {

using Nan = FloatFormat::NanEncoding;

constexpr uint64_t Mask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

constexpr uint64_t kF64SignBit = uint64_t{1} << 63;
constexpr uint64_t kF64ExponentMask = uint64_t{0x7ff} << 52;
constexpr uint64_t kF64MantissaMask = Mask(52);

int MagnitudeBits(const FloatFormat& f) { return f.exponent_bits + f.mantissa_bits; }

uint64_t SignBit(const FloatFormat& f) { return f.has_sign ? uint64_t{1} << MagnitudeBits(f) : 0; }

// Largest finite magnitude code (sign bit clear).
uint64_t MaxFiniteMagnitude(const FloatFormat& f) {
  switch (f.nan) {
    case Nan::kIeee:
      return (Mask(f.exponent_bits) << f.mantissa_bits) - 1;
    case Nan::kAllOnes:
      return Mask(MagnitudeBits(f)) - 1;
    case Nan::kNegativeZero:
    case Nan::kNone:
      return Mask(MagnitudeBits(f));
  }
  return 0;
}

bool IsNanCode(const FloatFormat& f, uint64_t bits) {
  const uint64_t magnitude = bits & Mask(MagnitudeBits(f));
  switch (f.nan) {
    case Nan::kIeee:
      return (magnitude >> f.mantissa_bits) == Mask(f.exponent_bits) &&
             (magnitude & Mask(f.mantissa_bits)) != 0;
    case Nan::kAllOnes:
      return magnitude == Mask(MagnitudeBits(f));
    case Nan::kNegativeZero:
      return bits == (uint64_t{1} << MagnitudeBits(f));
    case Nan::kNone:
      return false;
  }
  return false;
}

// The code a NaN encodes to. `f64_bits` is the double NaN being encoded.
uint64_t EncodeNan(const FloatFormat& f, uint64_t f64_bits) {
  const bool negative = (f64_bits & kF64SignBit) != 0;
  const uint64_t sign = negative ? SignBit(f) : 0;
  switch (f.nan) {
    case Nan::kIeee: {
      const int m = f.mantissa_bits;
      uint64_t payload = (f64_bits & kF64MantissaMask) >> (52 - m);
      if (payload == 0) payload = uint64_t{1} << (m - 1);  // stay a NaN: quiet
      return sign | (Mask(f.exponent_bits) << m) | payload;
    }
    case Nan::kAllOnes:
      return sign | Mask(MagnitudeBits(f));
    case Nan::kNegativeZero:
      return uint64_t{1} << MagnitudeBits(f);
    case Nan::kNone:
      // ml_dtypes: quiet_NaN() is -0; a negative NaN negates it to +0.
      return negative ? 0 : uint64_t{1} << MagnitudeBits(f);
  }
  return 0;
}

uint64_t EncodeOverflow(const FloatFormat& f, bool negative) {
  const uint64_t sign = negative ? SignBit(f) : 0;
  switch (f.nan) {
    case Nan::kIeee:
      return sign | (Mask(f.exponent_bits) << f.mantissa_bits);  // inf
    case Nan::kAllOnes:
    case Nan::kNegativeZero:
      return EncodeNan(f, negative ? kF64SignBit | kF64ExponentMask | 1 : kF64ExponentMask | 1);
    case Nan::kNone:
      return sign | MaxFiniteMagnitude(f);  // saturate
  }
  return 0;
}

double DecodeGeneric(const FloatFormat& f, uint64_t bits) {
  const int m = f.mantissa_bits;
  const int magnitude_bits = MagnitudeBits(f);
  bits &= Mask(magnitude_bits + (f.has_sign ? 1 : 0));
  const bool negative = (bits & SignBit(f)) != 0;
  const uint64_t magnitude = bits & Mask(magnitude_bits);
  const uint64_t exponent = magnitude >> m;
  const uint64_t mantissa = magnitude & Mask(m);
  const uint64_t f64_sign = negative ? kF64SignBit : 0;
  if (IsNanCode(f, bits)) {
    uint64_t payload = f.nan == Nan::kIeee ? mantissa << (52 - m) : uint64_t{1} << 51;
    return std::bit_cast<double>(f64_sign | kF64ExponentMask | payload);
  }
  if (f.nan == Nan::kIeee && exponent == Mask(f.exponent_bits)) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  double value;
  if (exponent == 0 && f.has_zero) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - f.exponent_bias - m);
  } else {
    value = std::ldexp(static_cast<double>((uint64_t{1} << m) | mantissa),
                       static_cast<int>(exponent) - f.exponent_bias - m);
  }
  return negative ? -value : value;
}

uint64_t EncodeGeneric(const FloatFormat& f, double value) {
  const uint64_t f64_bits = std::bit_cast<uint64_t>(value);
  if (std::isnan(value)) return EncodeNan(f, f64_bits);
  const bool negative = std::signbit(value);
  const uint64_t sign = negative ? SignBit(f) : 0;
  const double magnitude = std::fabs(value);
  if (!f.has_sign && negative && magnitude != 0) {
    return EncodeNan(f, kF64ExponentMask | 1);  // unsigned format: NaN
  }
  if (std::isinf(value)) {
    if (f.has_infinity) return sign | (Mask(f.exponent_bits) << f.mantissa_bits);
    return EncodeOverflow(f, negative);
  }
  if (magnitude == 0) {
    // No negative zero in the fnuz formats (that code is NaN); f8e8m0fnu has
    // no zero at all and gives its smallest value.
    if (f.nan == Nan::kNegativeZero || !f.has_zero) return 0;
    return sign;
  }

  const int m = f.mantissa_bits;
  int frexp_exponent;
  const double fraction = std::frexp(magnitude, &frexp_exponent);  // [0.5, 1)
  const int exponent = frexp_exponent - 1;                         // magnitude = 1.x * 2^exponent
  // magnitude == significand * 2^(exponent - 52), significand in [2^52, 2^53).
  const uint64_t significand = static_cast<uint64_t>(std::ldexp(fraction, 53));
  const int min_exponent = f.has_zero ? 1 - f.exponent_bias : -f.exponent_bias;
  if (!f.has_zero && exponent < min_exponent) return 0;  // f8e8m0fnu underflow
  const bool normal = exponent >= min_exponent;
  // The value of one unit in the last place of the result.
  const int quantum_exponent = (normal ? exponent : min_exponent) - m;
  const int shift = quantum_exponent - (exponent - 52);
  uint64_t code;
  if (shift >= 54) {
    code = 0;  // below half the smallest subnormal
  } else {
    uint64_t kept = significand >> shift;
    const uint64_t rest = significand & Mask(shift);
    const uint64_t half = uint64_t{1} << (shift - 1);
    code =
        normal
            ? ((static_cast<uint64_t>(exponent + f.exponent_bias) << m) + kept - (uint64_t{1} << m))
            : kept;
    if (rest > half || (rest == half && (code & 1) != 0)) ++code;
  }
  if (code > MaxFiniteMagnitude(f)) return EncodeOverflow(f, negative);
  if (code == 0 && f.nan == Nan::kNegativeZero) return 0;
  return sign | code;
}

uint64_t QuietNanPayload(const FloatFormat& f) { return uint64_t{1} << (f.mantissa_bits - 1); }

}  // namespace

double DecodeFloatBits(PrimitiveType type, uint64_t bits) {
  switch (type) {
    case PrimitiveType::kF64:
      return std::bit_cast<double>(bits);
    case PrimitiveType::kF32: {
      const uint32_t b = static_cast<uint32_t>(bits);
      const float value = std::bit_cast<float>(b);
      // float->double quiets signaling NaNs; keep the payload bits instead.
      if (std::isnan(value)) return DecodeGeneric(*FloatFormatOf(type), b);
      return static_cast<double>(value);
    }
    default: {
      std::optional<FloatFormat> format = FloatFormatOf(type);
      if (!format) return 0.0;
      return DecodeGeneric(*format, bits);
    }
  }
}

uint64_t EncodeFloatBits(PrimitiveType type, double value) {
  switch (type) {
    case PrimitiveType::kF64:
      return std::bit_cast<uint64_t>(value);
    case PrimitiveType::kF32:
      if (std::isnan(value)) return EncodeGeneric(*FloatFormatOf(type), value);
      return std::bit_cast<uint32_t>(static_cast<float>(value));
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      // Eigen::half and Eigen::bfloat16 convert a double through float.
      if (!std::isnan(value)) value = static_cast<double>(static_cast<float>(value));
      return EncodeGeneric(*FloatFormatOf(type), value);
    default: {
      std::optional<FloatFormat> format = FloatFormatOf(type);
      if (!format) return 0;
      return EncodeGeneric(*format, value);
    }
  }
}

int FloatMaxDigits10(PrimitiveType type) {
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (!format) return 0;
  // ceil(1 + digits * log10(2)), digits counting the implicit bit.
  const double digits = format->mantissa_bits + 1;
  return static_cast<int>(std::ceil(1.0 + digits * 0.30102999566398119521));
}

bool IsNanBits(PrimitiveType type, uint64_t bits) {
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (!format) return false;
  return IsNanCode(*format, bits & Mask(MagnitudeBits(*format) + (format->has_sign ? 1 : 0)));
}

std::optional<uint64_t> NanPayload(PrimitiveType type, uint64_t bits) {
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (!format || format->nan != Nan::kIeee || !IsNanBits(type, bits)) return std::nullopt;
  return bits & Mask(format->mantissa_bits);
}

std::optional<uint64_t> MakeNanBits(PrimitiveType type, bool negative,
                                    std::optional<uint64_t> payload) {
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (!format || format->nan == Nan::kNone) return std::nullopt;
  if (format->nan != Nan::kIeee) {
    if (payload.has_value()) return std::nullopt;
    return EncodeNan(*format, negative ? kF64SignBit | kF64ExponentMask | 1 : kF64ExponentMask | 1);
  }
  const uint64_t p = payload.value_or(QuietNanPayload(*format));
  if (p == 0 || p > Mask(format->mantissa_bits)) return std::nullopt;
  return (negative ? SignBit(*format) : 0) |
         (Mask(format->exponent_bits) << format->mantissa_bits) | p;
}

std::string FloatBitsToString(PrimitiveType type, uint64_t bits) {
  std::optional<FloatFormat> format = FloatFormatOf(type);
  if (!format) return "";
  const double value = DecodeFloatBits(type, bits);
  if (std::isnan(value)) {
    std::string out = std::signbit(value) ? "-nan" : "nan";
    std::optional<uint64_t> payload = NanPayload(type, bits);
    if (payload && *payload != QuietNanPayload(*format)) {
      absl::StrAppendFormat(&out, "(0x%x)", *payload);
    }
    return out;
  }
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (type == PrimitiveType::kF32) {
    const float f = static_cast<float>(value);
    std::string out = absl::StrFormat("%.*g", std::numeric_limits<float>::digits10, f);
    float parsed;
    if (!absl::SimpleAtof(out, &parsed) || parsed != f) {
      out = absl::StrFormat("%.*g", std::numeric_limits<float>::max_digits10, f);
    }
    return out;
  }
  if (type == PrimitiveType::kF64) {
    std::string out = absl::StrFormat("%.*g", std::numeric_limits<double>::digits10, value);
    double parsed;
    if (!absl::SimpleAtod(out, &parsed) || parsed != value) {
      out = absl::StrFormat("%.*g", std::numeric_limits<double>::max_digits10, value);
    }
    return out;
  }
  return absl::StrFormat("%.*g", FloatMaxDigits10(type), value);
}

}  // namespace hlogym
