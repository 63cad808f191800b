// scan_expander: scans -> counted while loops, checked against the
// evaluator's own scan.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

constexpr char kCumsum[] = R"(HloModule m
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY main {
  in = f32[6] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[6], f32[]) scan(in, zero), dimensions={0}, num_carries=1, to_apply=add
}
)";

TEST(ScanExpanderTest, CumulativeSumBecomesWhileLoop) {
  PassRun run = RunPass("scan_expander", kCumsum);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %scan_condition
CHECK: compare(s64[] {{.*}}, s64[] {{.*}}), direction=LT
CHECK: %scan_body
CHECK: f32[1] dynamic-slice(f32[6] {{.*}}), dynamic_slice_sizes={1}
CHECK: f32[] add(
CHECK: f32[6] dynamic-update-slice(
CHECK: ENTRY
CHECK: while({{.*}}), condition=%scan_condition, body=%scan_body
CHECK: ROOT {{.*}} (f32[6], f32[]) tuple(
)");
  EXPECT_EQ(run.after.find(" scan("), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(ScanExpanderTest, ReverseTwoInputsMatrixCarry) {
  // Scans dimension 1 of [3,5] inputs backwards; a vector carry and two
  // outputs, one of another element type.
  PassRun run = RunPass("scan_expander", R"(HloModule m
body {
  a = f32[3] parameter(0)
  b = s32[3] parameter(1)
  c = f32[3] parameter(2)
  bf = f32[3] convert(b)
  m = f32[3] multiply(a, bf)
  n = f32[3] add(m, c)
  lt = pred[3] compare(n, a), direction=LT
  ROOT t = (f32[3], pred[3], f32[3]) tuple(n, lt, n)
}
ENTRY main {
  a = f32[3,5] parameter(0)
  b = s32[3,5] parameter(1)
  c = f32[3] parameter(2)
  ROOT scan = (f32[3,5], pred[3,5], f32[3]) scan(a, b, c), dimensions={1}, num_carries=1, is_reverse=true, to_apply=body
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %scan_body
CHECK: s64[] subtract(
CHECK: f32[3,1] dynamic-slice(
CHECK: s32[3,1] dynamic-slice(
CHECK: pred[3,5] dynamic-update-slice(
)");
  ExpectSameSemantics(run);
}

TEST(ScanExpanderTest, SingleValueScanAndNesting) {
  // The inner scan (one output, no carry) sits in a computation the outer
  // one calls; both expand.
  PassRun run = RunPass("scan_expander", R"(HloModule m
neg {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
outer_body {
  x = f32[4,2] parameter(0)
  c = f32[4,2] parameter(1)
  inner = f32[4,2] scan(x), dimensions={0}, to_apply=neg
  s = f32[4,2] add(inner, c)
  ROOT t = (f32[4,2], f32[4,2]) tuple(s, s)
}
ENTRY main {
  in = f32[3,4,2] parameter(0)
  init = f32[4,2] parameter(1)
  scan = (f32[3,4,2], f32[4,2]) scan(in, init), dimensions={0}, num_carries=1, to_apply=outer_body
  ROOT r = f32[4,2] get-tuple-element(scan), index=1
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_EQ(run.after.find(" scan("), std::string::npos) << run.after;
  ExpectSameSemantics(run);
}

TEST(ScanExpanderTest, NoScanNoChange) {
  PassRun run = RunPass("scan_expander", R"(HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
)");
  EXPECT_FALSE(run.changed);
}

TEST(ScanExpanderTest, MalformedScanNamesTheInstruction) {
  auto module = ParseModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY main {
  in = f32[6] parameter(0)
  zero = f32[] constant(0)
  ROOT bad_scan = (f32[5], f32[]) scan(in, zero), dimensions={0}, num_carries=1, to_apply=add
}
)",
                            "t.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  auto pass = PassRegistry::Builtin().Create("scan_expander");
  ASSERT_TRUE(pass.ok());
  auto changed = (*pass)->Run(**module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("bad_scan"), std::string::npos) << changed.status();
}

}  // namespace
}  // namespace hlogym::testing
