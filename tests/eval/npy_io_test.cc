// .npy round trips: every element type, scalars, empty arrays, tuples saved
// as leaves, bf16 as raw "<u2" bits, the exact bytes NumPy expects, and
// malformed input rejected with an error (never a crash).
#include "eval/npy_io.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "gtest/gtest.h"
#include "scratch.h"
#include "text/parser.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;
using ::hlogym::testing::MakeLiteral;

Shape MustParseShape(std::string_view text) {
  auto shape = ParseShape(text);
  EXPECT_TRUE(shape.ok()) << text;
  return *shape;
}

// A literal of `shape` whose storage bytes are a deterministic pattern.
Literal Patterned(std::string_view shape_text, uint8_t salt = 7) {
  Literal literal(MustParseShape(shape_text));
  auto raw = literal.mutable_raw();
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i * 31 + salt);
  if (literal.shape().element_type() == PrimitiveType::kPred) {
    for (size_t i = 0; i < raw.size(); ++i) raw[i] &= 1;
  }
  return literal;
}

TEST(NpyIo, ExactBytesOfASmallF32Array) {
  Literal a = MakeLiteral("f32[2,3]", {1, 2, 3, 4, 5, 6});
  auto bytes = EncodeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  // 10 bytes of magic/version/length + a 60-character dict + '\n', padded to 128 (as NumPy
  // pads to a multiple of 64), then 6 floats.
  ASSERT_EQ(bytes->size(), 128u + 24u);
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>((*bytes)[8]) | static_cast<uint8_t>((*bytes)[9])
                                                                    << 8;
  EXPECT_EQ(header_len, 118u);
  const std::string header = bytes->substr(10, header_len);
  EXPECT_TRUE(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"))
      << header;
  EXPECT_EQ(header.back(), '\n');
  float second;
  std::memcpy(&second, bytes->data() + 128 + 4, 4);
  EXPECT_EQ(second, 2.0f);
}

TEST(NpyIo, ShapeTupleSyntax) {
  auto scalar = EncodeNpy(MakeLiteral("s32[]", {5}));
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'shape': (), }"), std::string::npos);
  auto vec = EncodeNpy(MakeLiteral("s32[3]", {1, 2, 3}));
  ASSERT_TRUE(vec.ok());
  EXPECT_NE(vec->find("'shape': (3,), }"), std::string::npos);
}

TEST(NpyIo, DescrPerType) {
  EXPECT_EQ(*NpyDescr(PrimitiveType::kPred), "|b1");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kS8), "|i1");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kU8), "|u1");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kS16), "<i2");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kS64), "<i8");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kU32), "<u4");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kF16), "<f2");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kF64), "<f8");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kC64), "<c8");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kC128), "<c16");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kBF16), "<u2");
  EXPECT_EQ(*NpyDescr(PrimitiveType::kF8E4M3FN), "|u1");
  EXPECT_FALSE(NpyHasNativeDtype(PrimitiveType::kBF16));
  EXPECT_TRUE(NpyHasNativeDtype(PrimitiveType::kF32));
  EXPECT_FALSE(NpyDescr(PrimitiveType::kTuple).ok());
}

class NpyRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(NpyRoundTrip, BitExact) {
  Literal a = Patterned(GetParam());
  auto bytes = EncodeNpy(a);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(bytes->size() % 64, a.raw().size() % 64);  // data starts on a 64-byte boundary
  auto back = DecodeNpy(*bytes, a.shape().element_type());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->shape().ToString(false), a.shape().ToString(false));
  EXPECT_TRUE(std::equal(a.raw().begin(), a.raw().end(), back->raw().begin(), back->raw().end()));
  if (NpyHasNativeDtype(a.shape().element_type())) {
    // The descr alone names the type.
    auto untyped = DecodeNpy(*bytes);
    ASSERT_TRUE(untyped.ok()) << untyped.status().message();
    EXPECT_EQ(untyped->shape().element_type(), a.shape().element_type());
  }
}

INSTANTIATE_TEST_SUITE_P(Types, NpyRoundTrip,
                         ::testing::Values("pred[5]", "s8[3,2]", "u8[7]", "s16[2,2]", "u16[3]",
                                           "s32[4,1,2]", "u32[2]", "s64[3]", "u64[2,2]", "f16[5]",
                                           "bf16[2,3]", "f32[]", "f32[0,4]", "f64[3,3]", "c64[2]",
                                           "c128[2]", "f8e4m3fn[6]", "f32[2,3,4,5,6]"));

TEST(NpyIo, Bf16ReadAsRawBitsAndRefusedAsF32) {
  Literal a = MakeLiteral("bf16[3]", {1.5, -2, 0.25});
  auto bytes = EncodeNpy(a);
  ASSERT_TRUE(bytes.ok());
  auto as_u16 = DecodeNpy(*bytes);
  ASSERT_TRUE(as_u16.ok());
  EXPECT_EQ(as_u16->shape().element_type(), PrimitiveType::kU16);
  EXPECT_EQ(as_u16->GetAsUint64(0), 0x3fc0u);  // bf16 1.5
  auto as_bf16 = DecodeNpy(*bytes, PrimitiveType::kBF16);
  ASSERT_TRUE(as_bf16.ok());
  EXPECT_EQ(as_bf16->GetAsDouble(1), -2.0);
  EXPECT_FALSE(DecodeNpy(*bytes, PrimitiveType::kF32).ok());
  // f32 data is not silently reinterpreted as bf16 either.
  auto f32 = EncodeNpy(MakeLiteral("f32[3]", {1, 2, 3}));
  EXPECT_FALSE(DecodeNpy(*f32, PrimitiveType::kBF16).ok());
}

TEST(NpyIo, ReadsNumpyVariants) {
  // What numpy >= 1.x writes with np.save(np.arange(3, dtype='<i4')): version
  // 1.0, header padded to 128 bytes (older numpy padded to 16; both are fine).
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size()));
  file.push_back(0);
  file += header;
  for (int32_t v : {0, 1, 2}) file.append(reinterpret_cast<const char*>(&v), 4);
  auto lit = DecodeNpy(file);
  ASSERT_TRUE(lit.ok()) << lit.status().message();
  EXPECT_EQ(lit->shape().ToString(false), "s32[3]");
  EXPECT_EQ(lit->GetAsInt64(2), 2);

  // Version 2.0 (4-byte header length), double-quoted keys.
  std::string h2 = "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (1, 2)}\n";
  std::string file2 = std::string("\x93NUMPY\x02\x00", 8);
  const uint32_t len = h2.size();
  file2.append(reinterpret_cast<const char*>(&len), 4);
  file2 += h2;
  for (double v : {0.5, -1.0}) file2.append(reinterpret_cast<const char*>(&v), 8);
  auto lit2 = DecodeNpy(file2);
  ASSERT_TRUE(lit2.ok()) << lit2.status().message();
  EXPECT_EQ(lit2->GetAsDouble(1), -1.0);
}

TEST(NpyIo, RejectsMalformedInput) {
  auto good = EncodeNpy(MakeLiteral("f32[4]", {1, 2, 3, 4}));
  ASSERT_TRUE(good.ok());
  EXPECT_FALSE(DecodeNpy("").ok());
  EXPECT_FALSE(DecodeNpy("not a numpy file at all").ok());
  EXPECT_FALSE(DecodeNpy(good->substr(0, 20)).ok());                // truncated header
  EXPECT_FALSE(DecodeNpy(good->substr(0, good->size() - 1)).ok());  // truncated data
  EXPECT_FALSE(DecodeNpy(*good + "x").ok());                        // trailing bytes
  std::string fortran = *good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_FALSE(DecodeNpy(fortran).ok());
  std::string big = *good;
  big.replace(big.find("<f4"), 3, ">f4");
  EXPECT_FALSE(DecodeNpy(big).ok());
  std::string object = *good;
  object.replace(object.find("<f4"), 3, "|O8");
  EXPECT_FALSE(DecodeNpy(object).ok());
  // Every prefix is rejected without crashing.
  for (size_t n = 0; n < good->size(); ++n) EXPECT_FALSE(DecodeNpy(good->substr(0, n)).ok()) << n;
}

TEST(NpyIo, TupleLeavesToDirectoryAndBack) {
  const std::string dir = testing::FreshScratchPath("tuple").string();
  Shape shape = MustParseShape("(f32[2,2], (bf16[3], s32[]), token[], pred[4])");
  Literal tuple(shape);
  tuple.mutable_tuple_elements()[0] = Patterned("f32[2,2]", 1);
  tuple.mutable_tuple_elements()[1].mutable_tuple_elements()[0] = Patterned("bf16[3]", 2);
  tuple.mutable_tuple_elements()[1].mutable_tuple_elements()[1] = Patterned("s32[]", 3);
  tuple.mutable_tuple_elements()[3] = Patterned("pred[4]", 4);

  auto leaves = SaveLiteralLeaves(dir, "out", tuple);
  ASSERT_TRUE(leaves.ok()) << leaves.status().message();
  ASSERT_EQ(leaves->size(), 4u);  // the token has no file
  EXPECT_EQ((*leaves)[0].file, "out.0.npy");
  EXPECT_EQ((*leaves)[1].file, "out.1.0.npy");
  EXPECT_EQ((*leaves)[1].descr, "<u2");
  EXPECT_EQ((*leaves)[1].shape.element_type(), PrimitiveType::kBF16);
  EXPECT_EQ((*leaves)[2].tuple_index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ((*leaves)[3].file, "out.3.npy");
  for (const NpyLeaf& leaf : *leaves) EXPECT_TRUE(fs::exists(fs::path(dir) / leaf.file));

  auto back = LoadLiteralLeaves(dir, "out", shape);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == tuple);

  // A shape that does not match the files is an error naming the file.
  auto wrong =
      LoadLiteralLeaves(dir, "out", MustParseShape("(f32[4], (bf16[3], s32[]), token[], pred[4])"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(std::string(wrong.status().message()).find("out.0.npy"), std::string::npos);
  auto missing = LoadLiteralLeaves(dir, "arg0", MustParseShape("f32[2]"));
  EXPECT_FALSE(missing.ok());

  // A plain array is saved as stem.npy.
  auto single = SaveLiteralLeaves(dir, "arg3", Patterned("f64[2]"));
  ASSERT_TRUE(single.ok());
  ASSERT_EQ(single->size(), 1u);
  EXPECT_EQ((*single)[0].file, "arg3.npy");
  EXPECT_TRUE((*single)[0].tuple_index.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlogym
