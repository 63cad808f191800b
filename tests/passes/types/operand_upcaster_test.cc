// operand_upcaster: dot/convolution operands converted to a wider result type.
#include "passes/types/operand_upcaster.h"

#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(OperandUpcasterTest, HigherPrecisionTypeOrder) {
  using T = PrimitiveType;
  EXPECT_EQ(HigherPrecisionType(T::kBF16, T::kF16), T::kBF16);  // range first
  EXPECT_EQ(HigherPrecisionType(T::kF16, T::kBF16), T::kBF16);
  EXPECT_EQ(HigherPrecisionType(T::kS8, T::kF16), T::kF16);  // float over int
  EXPECT_EQ(HigherPrecisionType(T::kU8, T::kS8), T::kS8);    // signed on a tie
  EXPECT_EQ(HigherPrecisionType(T::kS32, T::kS8), T::kS32);
  EXPECT_EQ(HigherPrecisionType(T::kF32, T::kC64), T::kC64);
  EXPECT_EQ(HigherPrecisionType(T::kF8E4M3FN, T::kF8E5M2), T::kF8E5M2);
  EXPECT_EQ(HigherPrecisionType(T::kF8E4M3FN, T::kF8E4M3), T::kF8E4M3FN);
}

TEST(OperandUpcasterTest, UpcastsBf16DotOperandsToF32) {
  PassRun run = RunPass("operand_upcaster", R"(HloModule m
ENTRY main {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[2,3] convert(bf16[2,3] %a)
CHECK: f32[3,4] convert(bf16[3,4] %b)
CHECK: ROOT %d = f32[2,4] dot(f32[2,3] %convert{{.*}}, f32[3,4] %convert
)");
  ExpectSameSemantics(run);
}

// XLA:CPU hands a bf16 x bf16 -> f32 matrix product with a dimension of 8 or more, the left
// side's contraction last and more than one row and column, to YNNPACK, and its upcaster leaves
// such a dot as it is (checked against XLA's dumps, as are the three it converts below).
TEST(OperandUpcasterTest, LeavesTheDotsTheCpuLibraryTakes) {
  PassRun run = RunPass("operand_upcaster", R"(HloModule m
ENTRY main {
  a = bf16[64,128] parameter(0)
  b = bf16[128,64] parameter(1)
  library = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  transposed = f32[128,128] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  row = bf16[1,128] parameter(2)
  vector = f32[1,64] dot(row, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = bf16[4,6] parameter(3)
  d = bf16[6,4] parameter(4)
  small = f32[4,4] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[64,64], f32[128,128], f32[1,64], f32[4,4]) tuple(library, transposed, vector, small)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %library = f32[64,64] dot(bf16[64,128] %a, bf16[128,64] %b)
CHECK: %transposed = f32[128,128] dot(f32[64,128] %convert
CHECK: %vector = f32[1,64] dot(f32[1,128] %convert
CHECK: %small = f32[4,4] dot(f32[4,6] %convert
)");
  ExpectSameSemantics(run);
  // The generic pass (no CPU library) converts them all.
  auto module = ParseModule(run.before);
  ASSERT_TRUE(module.ok()) << module.status();
  OperandUpcaster generic(/*cpu_library_filter=*/false);
  ASSERT_TRUE(*generic.Run(**module));
  EXPECT_EQ(PrintModule(**module).find("dot(bf16"), std::string::npos);
}

TEST(OperandUpcasterTest, UpcastsOnlyTheNarrowOperandOfAnIntegerDot) {
  PassRun run = RunPass("operand_upcaster", R"(HloModule m
ENTRY main {
  a = s8[4] parameter(0)
  b = s32[4] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s32[4] convert(s8[4] %a)
CHECK-NOT: convert(
CHECK: ROOT %d = s32[] dot(s32[4] %convert{{[^,]*}}, s32[4] %b)
)");
  ExpectSameSemantics(run);
}

TEST(OperandUpcasterTest, UpcastsConvolutionOperands) {
  PassRun run = RunPass("operand_upcaster", R"(HloModule m
ENTRY main {
  x = f16[1,5,2] parameter(0)
  w = f16[3,2,2] parameter(1)
  ROOT c = f32[1,3,2] convolution(x, w), window={size=3}, dim_labels=b0f_0io->b0f
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[1,5,2] convert(f16[1,5,2] %x)
CHECK: f32[3,2,2] convert(f16[3,2,2] %w)
CHECK: ROOT %c = f32[1,3,2] convolution(
)");
  ExpectSameSemantics(run);
}

TEST(OperandUpcasterTest, LeavesSameTypeAndNarrowingDotsAlone) {
  PassRun run = RunPass("operand_upcaster", R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  same = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  narrow = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,4], bf16[2,4]) tuple(same, narrow)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
