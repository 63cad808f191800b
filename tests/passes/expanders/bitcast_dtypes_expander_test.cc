// bitcast_dtypes_expander: bitcast-convert between widths as shifts and ors.
#include "eval/evaluator.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(BitcastDtypesExpanderTest, NarrowingUsesShiftsOfABroadcast) {
  PassRun run = RunPass("bitcast_dtypes_expander", R"(HloModule m
ENTRY main {
  x = f32[3] parameter(0)
  ROOT b = s8[3,4] bitcast-convert(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[3,4] broadcast(f32[3] %x), dimensions={0}
CHECK: u32[3,4] bitcast-convert(
CHECK: u32[] constant(8)
CHECK: u32[3,4] iota(), iota_dimension=1
CHECK: multiply(
CHECK: shift-right-logical(
CHECK: u32[] constant(255)
CHECK: and(
CHECK: u8[3,4] convert(
CHECK: ROOT {{.*}} s8[3,4] bitcast-convert(u8[3,4]
)");
  ExpectSameSemantics(run);
}

TEST(BitcastDtypesExpanderTest, WideningOrsShiftedSlices) {
  PassRun run = RunPass("bitcast_dtypes_expander", R"(HloModule m
ENTRY main {
  x = u8[2,3,4] parameter(0)
  ROOT b = f32[2,3] bitcast-convert(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: u8[2,12] reshape(u8[2,3,4] %x)
CHECK: slice({{.*}}), slice={[0:2], [0:9:4]}
CHECK: u32[2,3] convert(
CHECK: slice({{.*}}), slice={[0:2], [1:10:4]}
CHECK: shift-left(
CHECK: or(
CHECK: slice({{.*}}), slice={[0:2], [3:12:4]}
CHECK: ROOT {{.*}} f32[2,3] bitcast-convert(u32[2,3]
)");
  // Check bit for bit on a known input: bytes 00 00 80 3f are 1.0f.
  Literal x(Shape(PrimitiveType::kU8, {2, 3, 4}));
  for (int64_t i = 0; i < 6; ++i) {
    x.SetFromUint64(4 * i + 2, 0x80);
    x.SetFromUint64(4 * i + 3, 0x3f + (i == 5 ? 0x80 : 0));  // last one -1.0
  }
  auto result = Evaluate(*run.module, {x});
  ASSERT_TRUE(result.ok()) << result.status();
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(result->GetAsDouble(i), i == 5 ? -1.0 : 1.0);
  ExpectSameSemantics(run);
}

TEST(BitcastDtypesExpanderTest, RankOneWideningGivesAScalar) {
  PassRun run = RunPass("bitcast_dtypes_expander", R"(HloModule m
ENTRY main {
  x = s16[2] parameter(0)
  ROOT b = s32[] bitcast-convert(x)
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: s16[1] slice(s16[2] %x), slice={[0:1:2]}
CHECK: u16[1] bitcast-convert(
CHECK: u32[1] convert(
CHECK: u32[] reshape(
CHECK: ROOT {{.*}} s32[] bitcast-convert(
)");
  ExpectSameSemantics(run);
}

TEST(BitcastDtypesExpanderTest, SameWidthIsLeftAlone) {
  PassRun run = RunPass("bitcast_dtypes_expander", R"(HloModule m
ENTRY main {
  x = f32[2] parameter(0)
  ROOT b = s32[2] bitcast-convert(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
