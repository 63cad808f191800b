#include "hlo/float_bits.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "hlo/literal.h"
#include "hlo/primitive_type.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

const std::vector<PT>& NarrowTypes() {
  static const std::vector<PT> types = {
      PT::kF4E2M1FN,   PT::kF8E3M4, PT::kF8E4M3,     PT::kF8E4M3FN,  PT::kF8E4M3B11FNUZ,
      PT::kF8E4M3FNUZ, PT::kF8E5M2, PT::kF8E5M2FNUZ, PT::kF8E8M0FNU,
  };
  return types;
}

uint16_t HalfBits(Eigen::half h) { return Eigen::numext::bit_cast<uint16_t>(h); }
uint16_t BfloatBits(Eigen::bfloat16 b) { return Eigen::numext::bit_cast<uint16_t>(b); }

TEST(FloatFormat, ParametersMatchMlDtypes) {
  using Nan = FloatFormat::NanEncoding;
  auto f = *FloatFormatOf(PT::kF8E4M3FN);
  EXPECT_EQ(f.exponent_bits, 4);
  EXPECT_EQ(f.mantissa_bits, 3);
  EXPECT_EQ(f.exponent_bias, 7);
  EXPECT_FALSE(f.has_infinity);
  EXPECT_EQ(f.nan, Nan::kAllOnes);
  EXPECT_EQ(FloatFormatOf(PT::kF8E4M3FNUZ)->exponent_bias, 8);
  EXPECT_EQ(FloatFormatOf(PT::kF8E4M3B11FNUZ)->exponent_bias, 11);
  EXPECT_EQ(FloatFormatOf(PT::kF8E5M2FNUZ)->exponent_bias, 16);
  EXPECT_EQ(FloatFormatOf(PT::kF8E3M4)->exponent_bias, 3);
  EXPECT_EQ(FloatFormatOf(PT::kF8E8M0FNU)->nan, Nan::kAllOnes);
  EXPECT_FALSE(FloatFormatOf(PT::kF8E8M0FNU)->has_sign);
  EXPECT_FALSE(FloatFormatOf(PT::kF8E8M0FNU)->has_zero);
  EXPECT_EQ(FloatFormatOf(PT::kF4E2M1FN)->nan, Nan::kNone);
  EXPECT_FALSE(FloatFormatOf(PT::kS32).has_value());
}

// Every code of every narrow type decodes to a value that encodes back to the
// same code (NaNs included: each NaN code is that format's canonical NaN or
// keeps its payload).
TEST(FloatBits, ExhaustiveNarrowRoundTrip) {
  for (PT type : NarrowTypes()) {
    const int codes = 1 << BitWidth(type);
    int nans = 0;
    for (int code = 0; code < codes; ++code) {
      const double value = DecodeFloatBits(type, code);
      EXPECT_EQ(std::isnan(value), IsNanBits(type, code))
          << PrimitiveTypeName(type) << " code " << code;
      if (std::isnan(value)) ++nans;
      EXPECT_EQ(EncodeFloatBits(type, value), static_cast<uint64_t>(code))
          << PrimitiveTypeName(type) << " code " << code << " value " << value;
    }
    int expected_nans = 0;
    switch (type) {
      case PT::kF4E2M1FN:
        expected_nans = 0;
        break;
      case PT::kF8E4M3FN:
        expected_nans = 2;
        break;  // 0x7f, 0xff
      case PT::kF8E4M3FNUZ:
      case PT::kF8E4M3B11FNUZ:
      case PT::kF8E5M2FNUZ:
      case PT::kF8E8M0FNU:
        expected_nans = 1;
        break;
      case PT::kF8E5M2:
        expected_nans = 6;
        break;  // 2 signs x 3 payloads
      case PT::kF8E4M3:
        expected_nans = 14;
        break;  // 2 x 7
      case PT::kF8E3M4:
        expected_nans = 30;
        break;  // 2 x 15
      default:
        break;
    }
    EXPECT_EQ(nans, expected_nans) << PrimitiveTypeName(type);
  }
}

// Values are strictly increasing over the positive codes (no duplicates, no
// gaps in the ordering), which checks subnormals meet normals correctly.
TEST(FloatBits, PositiveCodesAreMonotonic) {
  for (PT type : NarrowTypes()) {
    const int half = type == PT::kF8E8M0FNU ? 256 : (1 << BitWidth(type)) / 2;
    double previous = -1;
    for (int code = 0; code < half; ++code) {
      const double value = DecodeFloatBits(type, code);
      if (std::isnan(value) || std::isinf(value)) continue;
      EXPECT_GT(value, previous) << PrimitiveTypeName(type) << " code " << code;
      previous = value;
    }
  }
}

TEST(FloatBits, KnownValues) {
  // f8e4m3fn: bias 7, no inf, max 448, NaN 0x7f/0xff.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0x7e), 448);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0x38), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0x01), std::ldexp(1, -9));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0x08), std::ldexp(1, -6));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0xfe), -448);
  EXPECT_TRUE(std::isnan(DecodeFloatBits(PT::kF8E4M3FN, 0x7f)));
  EXPECT_TRUE(std::signbit(DecodeFloatBits(PT::kF8E4M3FN, 0xff)));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FN, 0x78), 256);  // all-ones exponent is finite

  // f8e5m2: IEEE, bias 15.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2, 0x7b), 57344);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2, 0x7c), kInf);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2, 0xfc), -kInf);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2, 0x3c), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2, 0x01), std::ldexp(1, -16));

  // f8e4m3fnuz: bias 8, max 240, NaN 0x80.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FNUZ, 0x7f), 240);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FNUZ, 0x40), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FNUZ, 0x01), std::ldexp(1, -10));
  EXPECT_TRUE(std::isnan(DecodeFloatBits(PT::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3FNUZ, 0xff), -240);

  // f8e4m3b11fnuz: bias 11, max 30.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3B11FNUZ, 0x7f), 30);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3B11FNUZ, 0x58), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3B11FNUZ, 0x01), std::ldexp(1, -13));
  EXPECT_TRUE(std::isnan(DecodeFloatBits(PT::kF8E4M3B11FNUZ, 0x80)));

  // f8e5m2fnuz: bias 16, max 57344.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2FNUZ, 0x7f), 57344);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2FNUZ, 0x40), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E5M2FNUZ, 0x01), std::ldexp(1, -17));

  // f8e4m3: IEEE, bias 7, max 240.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3, 0x77), 240);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E4M3, 0x78), kInf);
  EXPECT_TRUE(std::isnan(DecodeFloatBits(PT::kF8E4M3, 0x79)));

  // f8e3m4: IEEE, bias 3, max 15.5.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E3M4, 0x6f), 15.5);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E3M4, 0x70), kInf);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E3M4, 0x30), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E3M4, 0x01), std::ldexp(1, -6));

  // f4e2m1fn: bias 1, no inf/NaN.
  const double f4[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int code = 0; code < 8; ++code) {
    EXPECT_EQ(DecodeFloatBits(PT::kF4E2M1FN, code), f4[code]) << code;
    EXPECT_EQ(DecodeFloatBits(PT::kF4E2M1FN, code | 8), -f4[code]) << code;
  }
  EXPECT_TRUE(std::signbit(DecodeFloatBits(PT::kF4E2M1FN, 8)));

  // f8e8m0fnu: powers of two, bias 127, 0xff NaN, no zero.
  EXPECT_EQ(DecodeFloatBits(PT::kF8E8M0FNU, 0x7f), 1);
  EXPECT_EQ(DecodeFloatBits(PT::kF8E8M0FNU, 0x00), std::ldexp(1, -127));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E8M0FNU, 0xfe), std::ldexp(1, 127));
  EXPECT_EQ(DecodeFloatBits(PT::kF8E8M0FNU, 0x80), 2);
  EXPECT_TRUE(std::isnan(DecodeFloatBits(PT::kF8E8M0FNU, 0xff)));
  EXPECT_FALSE(std::signbit(DecodeFloatBits(PT::kF8E8M0FNU, 0xff)));
}

TEST(FloatBits, RoundsToNearestEven) {
  // Between 1 (0x38) and 1.125 (0x39): the tie goes to the even code.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 1.0625), 0x38u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 1.0625 + 1e-9), 0x39u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 1.1875), 0x3au);  // 1.125..1.25 tie -> 0x3a
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 1.1875 - 1e-9), 0x39u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, -1.0625), 0xb8u);
  // Subnormals: half the smallest subnormal ties to zero, 1.5x ties up to 2.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, std::ldexp(1, -10)), 0x00u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, std::ldexp(3, -10)), 0x02u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, std::ldexp(1.01, -10)), 0x01u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, -std::ldexp(1, -12)), 0x80u);  // -0
  // Largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, std::ldexp(7.5, -9)), 0x08u);
  // f4e2m1fn: 5 is between 4 (0x6) and 6 (0x7); 0.25 between 0 and 0.5.
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 5), 0x6u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 0.25), 0x0u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 0.75), 0x2u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 2.5), 0x4u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 3.5), 0x6u);
  // f8e8m0fnu: 3 is between 2 (0x80) and 4 (0x81); 6 between 4 and 8 (0x82).
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, 3), 0x80u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, 6), 0x82u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, 3.01), 0x81u);
  // f8e5m2 and fnuz.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, 1.125), 0x3cu);  // 1..1.25 tie -> even 0x3c
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, 1.375), 0x3eu);  // 1.25..1.5 tie -> 0x3e
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FNUZ, -std::ldexp(1, -14)), 0x00u);  // no -0
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FNUZ, -0.0), 0x00u);
}

TEST(FloatBits, OverflowAndSpecials) {
  // fn: overflow to NaN, keeping the sign; the tie at max+half ulp goes to max.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 464), 0x7eu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, 465), 0x7fu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, -1e10), 0xffu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, kInf), 0x7fu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, kNan), 0x7fu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FN, -kNan), 0xffu);
  // IEEE: overflow to inf; max + half ulp ties to the even code (inf).
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, 61440), 0x7cu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, 61439), 0x7bu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, -kInf), 0xfcu);
  EXPECT_TRUE(IsNanBits(PT::kF8E5M2, EncodeFloatBits(PT::kF8E5M2, kNan)));
  // fnuz: the single NaN for overflow, inf and NaN of either sign.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FNUZ, 1e6), 0x80u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FNUZ, -kInf), 0x80u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2FNUZ, -kNan), 0x80u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E4M3FNUZ, 247), 0x7fu);  // rounds down to 240
  // f4e2m1fn saturates; NaN becomes -0 as in ml_dtypes.
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 7), 0x7u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, 100), 0x7u);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, -kInf), 0xfu);
  EXPECT_EQ(EncodeFloatBits(PT::kF4E2M1FN, kNan), 0x8u);
  // f8e8m0fnu: no sign, no zero.
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, 0), 0x00u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, 1e-300), 0x00u);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, -1), 0xffu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, std::ldexp(1, 128)), 0xffu);
  EXPECT_EQ(EncodeFloatBits(PT::kF8E8M0FNU, kInf), 0xffu);
  // f16 overflow: 65520 is the tie between 65504 and inf.
  EXPECT_EQ(EncodeFloatBits(PT::kF16, 65520), 0x7c00u);
  EXPECT_EQ(EncodeFloatBits(PT::kF16, 65519), 0x7bffu);
}

TEST(FloatBits, NanPayloadsSurvive) {
  // f32 signaling NaN: a plain float->double conversion would quiet it.
  EXPECT_EQ(EncodeFloatBits(PT::kF32, DecodeFloatBits(PT::kF32, 0x7f800001)), 0x7f800001u);
  EXPECT_EQ(EncodeFloatBits(PT::kF32, DecodeFloatBits(PT::kF32, 0xffc00123)), 0xffc00123u);
  EXPECT_EQ(EncodeFloatBits(PT::kF64, DecodeFloatBits(PT::kF64, 0x7ff0000000000001)),
            0x7ff0000000000001u);
  EXPECT_EQ(EncodeFloatBits(PT::kF16, DecodeFloatBits(PT::kF16, 0x7c01)), 0x7c01u);
  EXPECT_EQ(EncodeFloatBits(PT::kBF16, DecodeFloatBits(PT::kBF16, 0xff81)), 0xff81u);
  // A payload too low to survive narrowing still gives a NaN (the quiet one).
  EXPECT_EQ(EncodeFloatBits(PT::kF8E5M2, std::bit_cast<double>(0x7ff0000000000001ull)), 0x7eu);
  EXPECT_EQ(NanPayload(PT::kF8E5M2, 0x7d), 1u);
  EXPECT_FALSE(NanPayload(PT::kF8E4M3FN, 0x7f).has_value());
  EXPECT_EQ(MakeNanBits(PT::kF32, false), 0x7fc00000u);
  EXPECT_EQ(MakeNanBits(PT::kF32, true, 1), 0xff800001u);
  EXPECT_EQ(MakeNanBits(PT::kF16, false, 0x3ff), 0x7fffu);
  EXPECT_FALSE(MakeNanBits(PT::kF16, false, 0x400).has_value());
  EXPECT_FALSE(MakeNanBits(PT::kF16, false, 0).has_value());
  EXPECT_EQ(MakeNanBits(PT::kF8E4M3FN, true), 0xffu);
  EXPECT_EQ(MakeNanBits(PT::kF8E4M3FNUZ, false), 0x80u);
  EXPECT_EQ(MakeNanBits(PT::kF8E8M0FNU, false), 0xffu);
  EXPECT_FALSE(MakeNanBits(PT::kF8E4M3FN, false, 3).has_value());
  EXPECT_FALSE(MakeNanBits(PT::kF4E2M1FN, false).has_value());
}

TEST(FloatBits, HalfMatchesEigenOnEveryCode) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const Eigen::half h = Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(code));
    const double value = DecodeFloatBits(PT::kF16, code);
    if (Eigen::numext::isnan(h)) {
      EXPECT_TRUE(std::isnan(value)) << code;
    } else {
      EXPECT_EQ(value, static_cast<double>(static_cast<float>(h))) << code;
    }
    EXPECT_EQ(EncodeFloatBits(PT::kF16, value), code) << code;
  }
}

TEST(FloatBits, BfloatMatchesEigenOnEveryCode) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const Eigen::bfloat16 b = Eigen::numext::bit_cast<Eigen::bfloat16>(static_cast<uint16_t>(code));
    const double value = DecodeFloatBits(PT::kBF16, code);
    if (Eigen::numext::isnan(b)) {
      EXPECT_TRUE(std::isnan(value)) << code;
    } else {
      EXPECT_EQ(value, static_cast<double>(static_cast<float>(b))) << code;
    }
    EXPECT_EQ(EncodeFloatBits(PT::kBF16, value), code) << code;
  }
}

// Random doubles, concentrated around each format's range (normals,
// subnormals, overflow, exact ties), encode like Eigen / native float.
TEST(FloatBits, EncodeMatchesEigenAndNativeOnRandomDoubles) {
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::uniform_int_distribution<uint64_t> mantissa(0, (uint64_t{1} << 52) - 1);
  std::uniform_int_distribution<int> small(0, 15);
  for (int i = 0; i < 200000; ++i) {
    uint64_t m = mantissa(rng);
    // Sometimes cut the mantissa short to produce exact ties.
    if (i % 3 == 0) m &= ~((uint64_t{1} << (52 - small(rng))) - 1) | (uint64_t{1} << 51);
    const int e = (i % 7 == 0) ? exponent(rng) - 110 : exponent(rng);
    double d = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -52), e);
    if (i % 2) d = -d;
    EXPECT_EQ(EncodeFloatBits(PT::kF16, d), HalfBits(Eigen::half(static_cast<float>(d)))) << d;
    EXPECT_EQ(EncodeFloatBits(PT::kBF16, d), BfloatBits(Eigen::bfloat16(static_cast<float>(d))))
        << d;
    EXPECT_EQ(EncodeFloatBits(PT::kF32, d), std::bit_cast<uint32_t>(static_cast<float>(d))) << d;
  }
}

// Between every pair of adjacent positive values a < b of each narrow type:
// a quarter of the way rounds to a, three quarters to b, and the midpoint to
// whichever code is even; the same holds for the negatives.
TEST(FloatBits, NarrowEncodeIsNearestEven) {
  for (PT type : NarrowTypes()) {
    const FloatFormat format = *FloatFormatOf(type);
    const uint64_t sign_bit = format.has_sign ? uint64_t{1} << (BitWidth(type) - 1) : 0;
    std::vector<std::pair<double, uint64_t>> values;  // positive finite, by code
    for (uint64_t c = 0; c < (uint64_t{1} << BitWidth(type)); ++c) {
      if (sign_bit != 0 && (c & sign_bit)) continue;
      const double v = DecodeFloatBits(type, c);
      if (std::isfinite(v)) values.push_back({v, c});
    }
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      const auto [a, ca] = values[i];
      const auto [b, cb] = values[i + 1];
      const double gap = b - a;
      const uint64_t even = (ca & 1) == 0 ? ca : cb;
      EXPECT_EQ(EncodeFloatBits(type, a + gap * 0.25), ca) << PrimitiveTypeName(type) << " " << a;
      EXPECT_EQ(EncodeFloatBits(type, a + gap * 0.5), even) << PrimitiveTypeName(type) << " " << a;
      EXPECT_EQ(EncodeFloatBits(type, a + gap * 0.75), cb) << PrimitiveTypeName(type) << " " << a;
      if (sign_bit == 0) continue;
      auto negative = [&](uint64_t code) -> uint64_t {
        // The fnuz formats have no negative zero.
        if (code == 0 && format.nan == FloatFormat::NanEncoding::kNegativeZero) return 0;
        return code | sign_bit;
      };
      EXPECT_EQ(EncodeFloatBits(type, -(a + gap * 0.25)), negative(ca))
          << PrimitiveTypeName(type) << " " << -a;
      EXPECT_EQ(EncodeFloatBits(type, -(a + gap * 0.5)), negative(even))
          << PrimitiveTypeName(type) << " " << -a;
      EXPECT_EQ(EncodeFloatBits(type, -(a + gap * 0.75)), negative(cb))
          << PrimitiveTypeName(type) << " " << -a;
    }
  }
}

TEST(FloatBits, MaxDigits10) {
  EXPECT_EQ(FloatMaxDigits10(PT::kF32), 9);
  EXPECT_EQ(FloatMaxDigits10(PT::kF64), 17);
  EXPECT_EQ(FloatMaxDigits10(PT::kF16), 5);
  EXPECT_EQ(FloatMaxDigits10(PT::kBF16), 4);
  EXPECT_EQ(FloatMaxDigits10(PT::kF8E4M3FN), 3);
  EXPECT_EQ(FloatMaxDigits10(PT::kF8E5M2), 2);
  EXPECT_EQ(FloatMaxDigits10(PT::kF8E3M4), 3);
  EXPECT_EQ(FloatMaxDigits10(PT::kF4E2M1FN), 2);
  EXPECT_EQ(FloatMaxDigits10(PT::kF8E8M0FNU), 2);
  EXPECT_EQ(FloatMaxDigits10(PT::kS32), 0);
}

std::string F32(float f) { return FloatBitsToString(PT::kF32, std::bit_cast<uint32_t>(f)); }
std::string F64(double d) { return FloatBitsToString(PT::kF64, std::bit_cast<uint64_t>(d)); }
std::string Enc(PT type, double d) { return FloatBitsToString(type, EncodeFloatBits(type, d)); }

TEST(FloatBitsToString, F32UsesSixDigitsWhenExact) {
  EXPECT_EQ(F32(1.0f), "1");
  EXPECT_EQ(F32(1.5f), "1.5");
  EXPECT_EQ(F32(-2.0f), "-2");
  EXPECT_EQ(F32(0.1f), "0.1");
  EXPECT_EQ(F32(1e-5f), "1e-05");
  EXPECT_EQ(F32(1e10f), "1e+10");
  EXPECT_EQ(F32(100000.0f), "100000");
  EXPECT_EQ(F32(1000000.0f), "1e+06");
  EXPECT_EQ(F32(1234567.0f), "1234567");  // "1.23457e+06" would not read back
  EXPECT_EQ(F32(3.14159265f), "3.14159274");
  EXPECT_EQ(F32(-0.0f), "-0");
  EXPECT_EQ(F32(std::numeric_limits<float>::max()), "3.40282347e+38");
  EXPECT_EQ(F32(std::numeric_limits<float>::denorm_min()), "1.4013e-45");
}

TEST(FloatBitsToString, F64UsesFifteenDigitsWhenExact) {
  EXPECT_EQ(F64(1.0), "1");
  EXPECT_EQ(F64(0.1), "0.1");
  EXPECT_EQ(F64(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(F64(1e100), "1e+100");
  EXPECT_EQ(F64(static_cast<double>(0.1f)), "0.10000000149011612");
}

TEST(FloatBitsToString, NarrowTypesUseMaxDigits10) {
  EXPECT_EQ(Enc(PT::kF16, 0.1), "0.099976");
  EXPECT_EQ(Enc(PT::kF16, 1), "1");
  EXPECT_EQ(Enc(PT::kF16, 65504), "65504");
  EXPECT_EQ(Enc(PT::kBF16, 0.1), "0.1001");
  EXPECT_EQ(Enc(PT::kBF16, 3.14159), "3.141");
  EXPECT_EQ(Enc(PT::kF8E4M3FN, 448), "448");
  EXPECT_EQ(Enc(PT::kF8E4M3FN, std::ldexp(1, -9)), "0.00195");
  EXPECT_EQ(Enc(PT::kF8E5M2, 57344), "5.7e+04");
  EXPECT_EQ(Enc(PT::kF8E5M2, 1.25), "1.2");
  EXPECT_EQ(Enc(PT::kF4E2M1FN, 1.5), "1.5");
  EXPECT_EQ(Enc(PT::kF4E2M1FN, -6), "-6");
  EXPECT_EQ(Enc(PT::kF8E8M0FNU, std::ldexp(1, 127)), "1.7e+38");
}

TEST(FloatBitsToString, InfAndNan) {
  EXPECT_EQ(F32(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(F64(-kInf), "-inf");
  EXPECT_EQ(FloatBitsToString(PT::kF32, 0x7fc00000), "nan");
  EXPECT_EQ(FloatBitsToString(PT::kF32, 0xffc00000), "-nan");
  EXPECT_EQ(FloatBitsToString(PT::kF32, 0x7f800001), "nan(0x1)");
  EXPECT_EQ(FloatBitsToString(PT::kF32, 0x7fc00001), "nan(0x400001)");
  EXPECT_EQ(FloatBitsToString(PT::kF64, 0x7ff8000000000000), "nan");
  EXPECT_EQ(FloatBitsToString(PT::kF64, 0xfff0000000000002), "-nan(0x2)");
  EXPECT_EQ(FloatBitsToString(PT::kF16, 0x7e00), "nan");
  EXPECT_EQ(FloatBitsToString(PT::kF16, 0x7c01), "nan(0x1)");
  EXPECT_EQ(FloatBitsToString(PT::kBF16, 0xffc0), "-nan");
  EXPECT_EQ(FloatBitsToString(PT::kF16, 0xfc00), "-inf");
  EXPECT_EQ(FloatBitsToString(PT::kF8E5M2, 0x7e), "nan");
  EXPECT_EQ(FloatBitsToString(PT::kF8E5M2, 0x7f), "nan(0x3)");
  EXPECT_EQ(FloatBitsToString(PT::kF8E5M2, 0x7c), "inf");
  EXPECT_EQ(FloatBitsToString(PT::kF8E4M3FN, 0x7f), "nan");
  EXPECT_EQ(FloatBitsToString(PT::kF8E4M3FN, 0xff), "-nan");
  EXPECT_EQ(FloatBitsToString(PT::kF8E4M3FNUZ, 0x80), "-nan");  // the sign bit is set
  EXPECT_EQ(FloatBitsToString(PT::kF8E8M0FNU, 0xff), "nan");
}

// Every printed narrow value reads back (as XLA's parser does: decimal to
// double, then to the type) to the same code.
TEST(FloatBitsToString, NarrowTextRoundTrips) {
  std::vector<PT> types = NarrowTypes();
  types.push_back(PT::kF16);
  types.push_back(PT::kBF16);
  for (PT type : types) {
    const int codes = 1 << BitWidth(type);
    for (int code = 0; code < codes; ++code) {
      if (IsNanBits(type, code)) continue;
      const std::string text = FloatBitsToString(type, code);
      const double parsed = std::strtod(text.c_str(), nullptr);
      EXPECT_EQ(EncodeFloatBits(type, parsed), static_cast<uint64_t>(code))
          << PrimitiveTypeName(type) << " " << text;
    }
  }
}

}  // namespace
}  // namespace hlogym
