#include "hlo/literal.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/hash/hash.h"

namespace hlogym {
namespace {

using PT = PrimitiveType;

Literal Array(PT type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal literal(Shape(type, std::move(dims)));
  EXPECT_EQ(static_cast<size_t>(literal.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) literal.SetFromDouble(i, values[i]);
  return literal;
}

Literal Iota(PT type, std::vector<int64_t> dims) {
  Literal literal(Shape(type, std::move(dims)));
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetFromInt64(i, i + 1);
  return literal;
}

std::vector<uint8_t> Raw(const Literal& literal) {
  return {literal.raw().begin(), literal.raw().end()};
}

TEST(Literal, ZeroFilledStorageSizes) {
  EXPECT_EQ(Literal(Shape(PT::kF32, {2, 3})).raw().size(), 24u);
  EXPECT_EQ(Literal(Shape(PT::kPred, {5})).raw().size(), 5u);
  EXPECT_EQ(Literal(Shape(PT::kS4, {5})).raw().size(), 5u);  // one byte per element
  EXPECT_EQ(Literal(Shape(PT::kF4E2M1FN, {3})).raw().size(), 3u);
  EXPECT_EQ(Literal(Shape(PT::kC64, {2})).raw().size(), 16u);
  EXPECT_EQ(Literal(Shape(PT::kC128, {})).raw().size(), 16u);
  EXPECT_EQ(Literal(Shape(PT::kBF16, {0, 4})).raw().size(), 0u);
  Literal f(Shape(PT::kF64, {4}));
  for (uint8_t b : f.raw()) EXPECT_EQ(b, 0);
  EXPECT_TRUE(f.IsAll(0));
}

TEST(Literal, TupleIsZeroFilledRecursively) {
  Shape shape = Shape::Tuple({Shape(PT::kS32, {2}), Shape::Tuple({Shape::Scalar(PT::kF32)})});
  Literal literal(shape);
  EXPECT_EQ(literal.shape(), shape);
  EXPECT_TRUE(literal.raw().empty());
  ASSERT_EQ(literal.tuple_elements().size(), 2u);
  EXPECT_EQ(literal.tuple_elements()[0].raw().size(), 8u);
  EXPECT_TRUE(literal.tuple_elements()[0].IsAll(0));
  ASSERT_EQ(literal.tuple_elements()[1].tuple_elements().size(), 1u);
  EXPECT_EQ(literal.tuple_elements()[1].tuple_elements()[0].GetAsDouble(0), 0.0);
  EXPECT_EQ(literal.ValueToString(), "( {0, 0}, ( 0 ) )");
  EXPECT_FALSE(literal.IsAll(0));  // tuples are never "all"
}

TEST(Literal, ArrayLeavesDepthFirstWithIndexPaths) {
  Literal literal(
      Shape::Tuple({Shape(PT::kS32, {2}), Shape::Tuple({Shape::Token(), Shape::Scalar(PT::kF32)}),
                    Shape::Tuple({}), Shape(PT::kPred, {3})}));
  const std::vector<LiteralLeaf> leaves = literal.ArrayLeaves();
  ASSERT_EQ(leaves.size(), 3u);  // the token and the empty tuple hold no array
  EXPECT_EQ(leaves[0].index, (std::vector<int64_t>{0}));
  EXPECT_EQ(leaves[0].array, &literal.tuple_elements()[0]);
  EXPECT_EQ(leaves[1].index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(leaves[1].array, &literal.tuple_elements()[1].tuple_elements()[1]);
  EXPECT_EQ(leaves[2].index, (std::vector<int64_t>{3}));
  EXPECT_EQ(leaves[2].array->shape(), Shape(PT::kPred, {3}));
  Literal array(Shape(PT::kF32, {4}));
  ASSERT_EQ(array.ArrayLeaves().size(), 1u);
  EXPECT_TRUE(array.ArrayLeaves()[0].index.empty());
  EXPECT_EQ(array.ArrayLeaves()[0].array, &array);
}

TEST(Literal, Elided) {
  Literal literal = Literal::Elided(Shape(PT::kF32, {1000}));
  EXPECT_TRUE(literal.elided());
  EXPECT_EQ(literal.ValueToString(), "{...}");
  EXPECT_FALSE(literal.IsAll(0));
  EXPECT_NE(literal, Literal(Shape(PT::kF32, {1000})));
  EXPECT_EQ(literal, Literal::Elided(Shape(PT::kF32, {1000})));
  EXPECT_EQ(Literal::Elided(Shape::Tuple({Shape::Scalar(PT::kF32)})).ValueToString(), "{...}");
}

TEST(Literal, LittleEndianStorage) {
  Literal s32(Shape::Scalar(PT::kS32));
  s32.SetFromInt64(0, 0x01020304);
  EXPECT_EQ(Raw(s32), (std::vector<uint8_t>{0x04, 0x03, 0x02, 0x01}));
  Literal f16(Shape::Scalar(PT::kF16));
  f16.SetFromDouble(0, 1.0);
  EXPECT_EQ(Raw(f16), (std::vector<uint8_t>{0x00, 0x3c}));
  Literal bf16(Shape::Scalar(PT::kBF16));
  bf16.SetFromDouble(0, 1.0);
  EXPECT_EQ(Raw(bf16), (std::vector<uint8_t>{0x80, 0x3f}));
  Literal f64(Shape::Scalar(PT::kF64));
  f64.SetFromDouble(0, -2.0);
  EXPECT_EQ(Raw(f64), (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0xc0}));
  Literal c64(Shape::Scalar(PT::kC64));
  c64.SetFromComplex(0, {1.5, -2.0});
  EXPECT_EQ(Raw(c64), (std::vector<uint8_t>{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}));
  EXPECT_EQ(c64.GetBits(0), 0xc00000003fc00000u);
  Literal c128(Shape::Scalar(PT::kC128));
  c128.SetFromComplex(0, {0.5, 0.25});
  EXPECT_EQ(c128.GetAsComplex(0), std::complex<double>(0.5, 0.25));
  EXPECT_EQ(c128.raw()[7], 0x3f);   // real part first
  EXPECT_EQ(c128.raw()[15], 0x3f);  // then imaginary
}

TEST(Literal, IntegersWrapToWidth) {
  Literal s8(Shape(PT::kS8, {2}));
  s8.SetFromInt64(0, 300);
  EXPECT_EQ(s8.GetAsInt64(0), 44);
  s8.SetFromInt64(1, -1);
  EXPECT_EQ(s8.GetBits(1), 0xffu);
  EXPECT_EQ(s8.GetAsInt64(1), -1);
  EXPECT_EQ(s8.GetAsUint64(1), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(s8.GetAsDouble(1), -1.0);
  s8.SetFromInt64(0, 128);
  EXPECT_EQ(s8.GetAsInt64(0), -128);

  Literal u8(Shape::Scalar(PT::kU8));
  u8.SetFromInt64(0, -1);
  EXPECT_EQ(u8.GetAsUint64(0), 255u);
  EXPECT_EQ(u8.GetAsInt64(0), 255);
  u8.SetFromUint64(0, 0x1234);
  EXPECT_EQ(u8.GetAsUint64(0), 0x34u);

  Literal s16(Shape::Scalar(PT::kS16));
  s16.SetFromUint64(0, 0xffff);
  EXPECT_EQ(s16.GetAsInt64(0), -1);

  Literal u64(Shape::Scalar(PT::kU64));
  u64.SetFromUint64(0, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.GetAsUint64(0), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(u64.GetAsInt64(0), -1);
  EXPECT_EQ(u64.GetAsDouble(0), 18446744073709551615.0);

  Literal s64(Shape::Scalar(PT::kS64));
  s64.SetFromInt64(0, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(s64.GetAsInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(s64.GetBits(0), uint64_t{1} << 63);
}

TEST(Literal, SubByteIntegers) {
  Literal s4(Shape(PT::kS4, {4}));
  s4.SetFromInt64(0, 7);
  s4.SetFromInt64(1, 8);
  s4.SetFromInt64(2, -1);
  s4.SetFromInt64(3, -9);
  EXPECT_EQ(s4.GetAsInt64(0), 7);
  EXPECT_EQ(s4.GetAsInt64(1), -8);
  EXPECT_EQ(s4.GetAsInt64(2), -1);
  EXPECT_EQ(s4.GetBits(2), 0xfu);
  EXPECT_EQ(s4.raw()[2], 0x0f);  // only the element's own bits are stored
  EXPECT_EQ(s4.GetAsInt64(3), 7);
  EXPECT_EQ(s4.ValueToString(), "{7, -8, -1, 7}");

  Literal u4(Shape::Scalar(PT::kU4));
  u4.SetFromInt64(0, 17);
  EXPECT_EQ(u4.GetAsUint64(0), 1u);
  u4.SetFromInt64(0, -1);
  EXPECT_EQ(u4.GetAsUint64(0), 15u);

  Literal s2(Shape::Scalar(PT::kS2));
  s2.SetFromInt64(0, 2);
  EXPECT_EQ(s2.GetAsInt64(0), -2);
  Literal s1(Shape::Scalar(PT::kS1));
  s1.SetFromInt64(0, 1);
  EXPECT_EQ(s1.GetAsInt64(0), -1);
  Literal u1(Shape::Scalar(PT::kU1));
  u1.SetFromInt64(0, 3);
  EXPECT_EQ(u1.GetAsUint64(0), 1u);
  Literal u2(Shape::Scalar(PT::kU2));
  u2.SetBits(0, 0xff);
  EXPECT_EQ(u2.GetBits(0), 3u);
}

TEST(Literal, FloatToIntTruncatesAndSaturates) {
  Literal s32(Shape(PT::kS32, {5}));
  s32.SetFromDouble(0, 3.9);
  s32.SetFromDouble(1, -3.9);
  s32.SetFromDouble(2, 1e20);
  s32.SetFromDouble(3, -1e20);
  s32.SetFromDouble(4, std::nan(""));
  EXPECT_EQ(s32.GetAsInt64(0), 3);
  EXPECT_EQ(s32.GetAsInt64(1), -3);
  EXPECT_EQ(s32.GetAsInt64(2), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(s32.GetAsInt64(3), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(s32.GetAsInt64(4), 0);

  Literal u8(Shape(PT::kU8, {3}));
  u8.SetFromDouble(0, -5);
  u8.SetFromDouble(1, 300);
  u8.SetFromDouble(2, 254.99);
  EXPECT_EQ(u8.GetAsUint64(0), 0u);
  EXPECT_EQ(u8.GetAsUint64(1), 255u);
  EXPECT_EQ(u8.GetAsUint64(2), 254u);

  Literal s4(Shape::Scalar(PT::kS4));
  s4.SetFromDouble(0, -100);
  EXPECT_EQ(s4.GetAsInt64(0), -8);

  Literal f32(Shape(PT::kF32, {4}));
  f32.SetFromDouble(0, 1e30);
  f32.SetFromDouble(1, -2.5);
  f32.SetFromDouble(2, -1e30);
  f32.SetFromDouble(3, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(f32.GetAsInt64(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(f32.GetAsInt64(1), -2);
  EXPECT_EQ(f32.GetAsInt64(2), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f32.GetAsInt64(3), 0);
  EXPECT_EQ(f32.GetAsUint64(1), 0u);
  EXPECT_EQ(f32.GetAsUint64(0), std::numeric_limits<uint64_t>::max());
}

TEST(Literal, FloatStorageRoundsToTheType) {
  Literal f32(Shape::Scalar(PT::kF32));
  f32.SetFromDouble(0, 0.1);
  EXPECT_EQ(f32.GetBits(0), std::bit_cast<uint32_t>(0.1f));
  EXPECT_EQ(f32.GetAsDouble(0), static_cast<double>(0.1f));
  f32.SetFromInt64(0, 16777217);  // 2^24 + 1 is not a float
  EXPECT_EQ(f32.GetAsDouble(0), 16777216.0);
  f32.SetFromUint64(0, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f32.GetAsDouble(0), 18446744073709551616.0);

  Literal f64(Shape::Scalar(PT::kF64));
  f64.SetFromInt64(0, (int64_t{1} << 53) + 1);
  EXPECT_EQ(f64.GetAsDouble(0), 9007199254740992.0);

  Literal f16(Shape::Scalar(PT::kF16));
  f16.SetFromInt64(0, 65520);
  EXPECT_TRUE(std::isinf(f16.GetAsDouble(0)));
  f16.SetFromDouble(0, 0.1);
  EXPECT_EQ(f16.GetBits(0), 0x2e66u);

  Literal e4m3(Shape::Scalar(PT::kF8E4M3FN));
  e4m3.SetFromDouble(0, 1000);
  EXPECT_TRUE(std::isnan(e4m3.GetAsDouble(0)));
  e4m3.SetFromInt64(0, 17);  // 16 and 18 are neighbours; tie to even 16
  EXPECT_EQ(e4m3.GetAsDouble(0), 16);

  Literal c64(Shape::Scalar(PT::kC64));
  c64.SetFromDouble(0, 0.1);
  EXPECT_EQ(c64.GetAsComplex(0), std::complex<double>(static_cast<double>(0.1f), 0));
  EXPECT_EQ(c64.GetAsDouble(0), static_cast<double>(0.1f));
  c64.SetFromInt64(0, 3);
  EXPECT_EQ(c64.GetAsInt64(0), 3);
}

TEST(Literal, PredAndBool) {
  Literal pred(Shape(PT::kPred, {4}));
  pred.SetFromInt64(0, 5);
  pred.SetFromDouble(1, 0.0);
  pred.SetFromDouble(2, -0.5);
  pred.SetFromUint64(3, 0);
  EXPECT_EQ(pred.GetBits(0), 1u);
  EXPECT_TRUE(pred.GetAsBool(0));
  EXPECT_FALSE(pred.GetAsBool(1));
  EXPECT_TRUE(pred.GetAsBool(2));
  EXPECT_EQ(pred.GetAsInt64(0), 1);
  EXPECT_EQ(pred.GetAsDouble(2), 1.0);
  EXPECT_EQ(pred.ValueToString(), "{1, 0, 1, 0}");

  Literal f(Shape(PT::kF32, {3}));
  f.SetFromDouble(0, -0.0);
  f.SetFromDouble(1, std::nan(""));
  f.SetFromDouble(2, 1e-40);
  EXPECT_FALSE(f.GetAsBool(0));
  EXPECT_TRUE(f.GetAsBool(1));
  EXPECT_TRUE(f.GetAsBool(2));  // f32 subnormal
  Literal c(Shape::Scalar(PT::kC128));
  c.SetFromComplex(0, {0, 1});
  EXPECT_TRUE(c.GetAsBool(0));
}

TEST(Literal, ScalarFactory) {
  EXPECT_EQ(Literal::Scalar(PT::kF32, 1.5f).ValueToString(), "1.5");
  EXPECT_EQ(Literal::Scalar(PT::kF32, 1.0).ValueToString(), "1");
  EXPECT_EQ(Literal::Scalar(PT::kPred, true).ValueToString(), "true");
  EXPECT_EQ(Literal::Scalar(PT::kPred, false).ValueToString(), "false");
  EXPECT_EQ(Literal::Scalar(PT::kS8, 300).ValueToString(), "44");
  EXPECT_EQ(Literal::Scalar(PT::kU32, -1).ValueToString(), "4294967295");
  EXPECT_EQ(Literal::Scalar(PT::kS64, std::numeric_limits<int64_t>::min()).ValueToString(),
            "-9223372036854775808");
  EXPECT_EQ(Literal::Scalar(PT::kU64, std::numeric_limits<uint64_t>::max()).ValueToString(),
            "18446744073709551615");
  EXPECT_EQ(Literal::Scalar(PT::kF16, 0.1).ValueToString(), "0.099976");
  EXPECT_EQ(Literal::Scalar(PT::kBF16, 1).ValueToString(), "1");
  EXPECT_EQ(Literal::Scalar(PT::kF32, -std::numeric_limits<double>::infinity()).ValueToString(),
            "-inf");
  EXPECT_EQ(Literal::Scalar(PT::kF64, std::numeric_limits<double>::quiet_NaN()).ValueToString(),
            "nan");
  EXPECT_EQ(Literal::Scalar(PT::kF64, -std::numeric_limits<double>::quiet_NaN()).ValueToString(),
            "-nan");
  EXPECT_EQ(Literal::Scalar(PT::kC64, 2).ValueToString(), "(2, 0)");
}

TEST(Literal, ValueToStringArrays) {
  EXPECT_EQ(Iota(PT::kS32, {3}).ValueToString(), "{1, 2, 3}");
  EXPECT_EQ(Iota(PT::kS32, {1}).ValueToString(), "{1}");
  EXPECT_EQ(Iota(PT::kS32, {0}).ValueToString(), "{}");
  EXPECT_EQ(Iota(PT::kS32, {2, 2}).ValueToString(), "{ { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(Iota(PT::kS32, {2, 1}).ValueToString(), "{ {1}, {2} }");
  EXPECT_EQ(Iota(PT::kS32, {1, 3}).ValueToString(), "{ { 1, 2, 3 } }");
  EXPECT_EQ(Iota(PT::kS32, {2, 0}).ValueToString(), "{ {}, {} }");
  EXPECT_EQ(Iota(PT::kS32, {0, 2}).ValueToString(), "{  }");
  EXPECT_EQ(Iota(PT::kS32, {2, 2, 2}).ValueToString(),
            "{ { { 1, 2 }, { 3, 4 } }, { { 5, 6 }, { 7, 8 } } }");
  EXPECT_EQ(Iota(PT::kS32, {1, 1, 1}).ValueToString(), "{ { {1} } }");
  // Rank > 3 labels the nested levels with their index.
  EXPECT_EQ(Iota(PT::kS32, {2, 1, 1, 2}).ValueToString(),
            "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } } }, { /*i0=1*/ { /*i1=0*/ { 3, 4 } } } }");
  EXPECT_EQ(Iota(PT::kS32, {1, 0, 1, 1}).ValueToString(), "{ { /*i0=0*/ } }");
  EXPECT_EQ(Iota(PT::kS32, {}).ValueToString(), "1");
  EXPECT_EQ(
      Array(PT::kF32, {3}, {1, 2.5, -std::numeric_limits<double>::infinity()}).ValueToString(),
      "{1, 2.5, -inf}");
  EXPECT_EQ(Array(PT::kF32, {2}, {0.1, 1e-5}).ValueToString(), "{0.1, 1e-05}");
  EXPECT_EQ(Array(PT::kPred, {2, 2}, {1, 0, 0, 1}).ValueToString(), "{ { 1, 0 }, { 0, 1 } }");
  Literal c64(Shape(PT::kC64, {2}));
  c64.SetFromComplex(0, {1, 2});
  c64.SetFromComplex(1, {-0.5, 0.1});
  EXPECT_EQ(c64.ValueToString(), "{(1, 2), (-0.5, 0.1)}");
  Literal c128(Shape::Scalar(PT::kC128));
  c128.SetFromComplex(0, {1.0 / 3, 0});
  EXPECT_EQ(c128.ValueToString(), "(0.33333333333333331, 0)");
}

TEST(Literal, ValueToStringTuples) {
  Literal tuple(Shape::Tuple({Shape::Scalar(PT::kS32), Shape(PT::kF32, {2}), Shape::Token()}));
  tuple.mutable_tuple_elements()[0].SetFromInt64(0, 1);
  tuple.mutable_tuple_elements()[1].SetFromDouble(0, 2);
  tuple.mutable_tuple_elements()[1].SetFromDouble(1, 3);
  EXPECT_EQ(tuple.ValueToString(), "( 1, {2, 3}, token )");
  EXPECT_EQ(Literal(Shape::Tuple({})).ValueToString(), "(  )");
}

TEST(Literal, IsAll) {
  EXPECT_TRUE(Array(PT::kF32, {3}, {0.1, 0.1, 0.1}).IsAll(0.1));
  EXPECT_FALSE(Array(PT::kF32, {3}, {0.1, 0.1, 0.2}).IsAll(0.1));
  EXPECT_FALSE(Array(PT::kF32, {3}, {0.1, 0.1, 0.1}).IsAll(0.2));
  EXPECT_TRUE(Array(PT::kF16, {2}, {0.1, 0.1}).IsAll(0.1));  // both sides rounded to f16
  // Bit for bit, as XLA compares: -0 is not 0 (XLA keeps x + -0, which is x).
  EXPECT_FALSE(Array(PT::kF32, {2}, {-0.0, 0.0}).IsAll(0));
  EXPECT_TRUE(Array(PT::kF32, {2}, {0.0, 0.0}).IsAll(0));
  EXPECT_FALSE(Array(PT::kF32, {1}, {std::nan("")}).IsAll(std::nan("")));
  EXPECT_TRUE(Array(PT::kS32, {2}, {0, 0}).IsAll(0));
  EXPECT_FALSE(Array(PT::kS32, {2}, {0, 0}).IsAll(0.5));  // not an s32 value
  EXPECT_FALSE(Array(PT::kS32, {2}, {1, 1}).IsAll(1.5));
  EXPECT_TRUE(Array(PT::kS32, {2}, {-7, -7}).IsAll(-7));
  EXPECT_FALSE(Iota(PT::kS8, {1}).IsAll(257));  // would wrap to 1
  EXPECT_TRUE(Iota(PT::kS8, {1}).IsAll(1));
  Literal u8(Shape(PT::kU8, {2}));
  u8.SetFromInt64(0, 255);
  u8.SetFromInt64(1, 255);
  EXPECT_TRUE(u8.IsAll(255));
  EXPECT_FALSE(u8.IsAll(-1));
  EXPECT_TRUE(Array(PT::kPred, {2}, {1, 1}).IsAll(1));
  EXPECT_FALSE(Array(PT::kPred, {2}, {1, 0}).IsAll(1));
  EXPECT_FALSE(Array(PT::kPred, {2}, {1, 1}).IsAll(2));
  EXPECT_TRUE(Array(PT::kC64, {2}, {3, 3}).IsAll(3));
  Literal c(Shape::Scalar(PT::kC64));
  c.SetFromComplex(0, {3, 1});
  EXPECT_FALSE(c.IsAll(3));
  EXPECT_FALSE(Array(PT::kF4E2M1FN, {1}, {0}).IsAll(std::nan("")));
}

TEST(Literal, EqualityAndHash) {
  Literal a = Iota(PT::kS32, {2, 2});
  Literal b = Iota(PT::kS32, {2, 2});
  EXPECT_EQ(a, b);
  EXPECT_EQ(absl::HashOf(a), absl::HashOf(b));
  b.SetFromInt64(3, 5);
  EXPECT_NE(a, b);
  Literal c = Iota(PT::kS32, {4});
  EXPECT_NE(a, c);  // same bytes, different shape
  Shape with_layout(PT::kS32, {2, 2});
  with_layout.set_layout(Layout{{0, 1}, ""});
  Literal d(with_layout);
  for (int i = 0; i < 4; ++i) d.SetFromInt64(i, i + 1);
  EXPECT_NE(a, d);  // layout differs
  // Float equality is bitwise: -0 and 0 differ, a NaN equals itself.
  EXPECT_NE(Literal::Scalar(PT::kF32, 0.0), Literal::Scalar(PT::kF32, -0.0));
  EXPECT_EQ(Literal::Scalar(PT::kF32, std::nan("")), Literal::Scalar(PT::kF32, std::nan("")));
  Literal t1(Shape::Tuple({Shape::Scalar(PT::kS32)}));
  Literal t2(Shape::Tuple({Shape::Scalar(PT::kS32)}));
  EXPECT_EQ(t1, t2);
  t2.mutable_tuple_elements()[0].SetFromInt64(0, 1);
  EXPECT_NE(t1, t2);
}

TEST(Literal, BitsRoundTripForBitcasts) {
  Literal f32(Shape::Scalar(PT::kF32));
  f32.SetBits(0, 0x7f800001);  // signaling NaN stays as written
  EXPECT_EQ(f32.GetBits(0), 0x7f800001u);
  EXPECT_EQ(f32.ValueToString(), "nan(0x1)");
  Literal e5m2(Shape::Scalar(PT::kF8E5M2));
  e5m2.SetBits(0, 0x1fc);  // masked to 8 bits
  EXPECT_EQ(e5m2.GetBits(0), 0xfcu);
  EXPECT_EQ(e5m2.ValueToString(), "-inf");
  Literal f4(Shape::Scalar(PT::kF4E2M1FN));
  f4.SetBits(0, 0x1f);
  EXPECT_EQ(f4.GetBits(0), 0xfu);
  EXPECT_EQ(f4.GetAsDouble(0), -6);
}

}  // namespace
}  // namespace hlogym
