// topk-decomposer: topk -> stable sort + slices.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

TEST(TopkDecomposerTest, ValuesAndIndices) {
  PassRun run = RunPass("topk-decomposer", R"(HloModule m
ENTRY main {
  x = f32[4,16] parameter(0)
  ROOT t = (f32[4,3], s32[4,3]) topk(x), k=3, largest=true
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: compare-greater-than
CHECK: s32[] parameter(3)
CHECK: ROOT {{.*}} compare({{.*}}), direction=GT, type=TOTALORDER
CHECK: s32[4,16] iota(), iota_dimension=1
CHECK: (f32[4,16], s32[4,16]) sort(f32[4,16] %x, s32[4,16] {{.*}}), dimensions={1}, is_stable=true, to_apply=%compare-greater-than
CHECK: f32[4,3] slice({{.*}}), slice={[0:4], [0:3]}
CHECK: s32[4,3] slice({{.*}}), slice={[0:4], [0:3]}
CHECK: ROOT {{.*}} tuple(
CHECK-NOT: topk
)");
  ExpectSameSemantics(run);
}

TEST(TopkDecomposerTest, ValuesOnlySmallestSkipsIota) {
  PassRun run = RunPass("topk-decomposer", R"(HloModule m
ENTRY main {
  x = s32[10] parameter(0)
  t = (s32[4], s32[4]) topk(x), k=4, largest=false
  ROOT v = s32[4] get-tuple-element(t), index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: compare-less-than
CHECK-NOT: parameter(2)
CHECK: ROOT {{.*}} compare({{.*}}), direction=LT
CHECK-NOT: iota
CHECK: s32[10] sort(s32[10] %x), dimensions={0}, is_stable=true
CHECK: ROOT {{.*}} s32[4] slice({{.*}}), slice={[0:4]}
)");
  EXPECT_EQ(run.after.find("TOTALORDER"), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(TopkDecomposerTest, CustomCallOnlyInAllVariant) {
  const char* hlo = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = f32[2,8] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", to_apply=cmp
}
)";
  EXPECT_FALSE(RunPass("topk-decomposer", hlo).changed);
  PassRun run = RunPass("topk-decomposer-all", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: sort({{.*}}), dimensions={1}, is_stable=true, to_apply=%cmp
CHECK-NOT: custom-call
)");
  ExpectSameSemantics(run);
}

TEST(TopkDecomposerTest, NoTopkNoChange) {
  PassRun run = RunPass("topk-decomposer", R"(HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  EXPECT_FALSE(run.changed);
}

}  // namespace
}  // namespace hlogym::testing
