// associative-scan-rewriter: standard associative scans -> cumulative
// reduce-windows (split in two levels when long).
#include "absl/strings/str_cat.h"
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

std::string CumsumModule(int length, const char* init, const char* op = "add",
                         const char* extra = "") {
  return absl::StrCat(
      R"(HloModule m
combine {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] )",
      op, R"((x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY main {
  in = f32[)",
      length, R"(] parameter(0)
  init = f32[] )",
      init, R"(
  scan = (f32[)",
      length,
      R"(], f32[]) scan(in, init), dimensions={0}, num_carries=1, is_associative=true, to_apply=combine)",
      extra, R"(
  ROOT r = f32[)",
      length, R"(] get-tuple-element(scan), index=0
}
)");
}

TEST(AssociativeScanRewriterTest, ShortScanBecomesOneReduceWindow) {
  PassRun run = RunPass("associative-scan-rewriter", CumsumModule(8, "constant(0)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %combine_rw_wrapper (carry_0: f32[], input_0: f32[]) -> f32[] {
CHECK: call(f32[] %input_0, f32[] %carry_0), to_apply=%combine
CHECK: ENTRY
CHECK: f32[8] reduce-window(f32[8] %in, f32[] %init), window={size=8 pad=7_0}, to_apply=%combine_rw_wrapper
CHECK: (f32[8], f32[]) tuple(
)");
  EXPECT_EQ(run.after.find(" scan("), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(AssociativeScanRewriterTest, NonZeroScalarInitShortScan) {
  // Any scalar init works for the single reduce-window.
  PassRun run = RunPass("associative-scan-rewriter", CumsumModule(5, "parameter(1)", "multiply"));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
}

TEST(AssociativeScanRewriterTest, LongScanWithIdentityInitIsSplit) {
  PassRun run = RunPass("associative-scan-rewriter", CumsumModule(40, "constant(0)"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: ENTRY
CHECK: f32[48] pad(
CHECK: f32[3,16] reshape(
CHECK: reduce-window(
CHECK: map(
CHECK: f32[40] slice(
)");
  ExpectSameSemantics(run);
}

TEST(AssociativeScanRewriterTest, VectorSlicesAreScalarized) {
  // A scan over dimension 1 of [3,4]: to_apply works on f32[3] slices and
  // a broadcast zero init.
  PassRun run = RunPass("associative-scan-rewriter", R"(HloModule m
combine {
  x = f32[3] parameter(0)
  c = f32[3] parameter(1)
  s = f32[3] maximum(x, c)
  ROOT t = (f32[3], f32[3]) tuple(s, s)
}
ENTRY main {
  in = f32[3,4] parameter(0)
  z = f32[] constant(-inf)
  init = f32[3] broadcast(z), dimensions={}
  scan = (f32[3,4], f32[3]) scan(in, init), dimensions={1}, num_carries=1, is_associative=true, to_apply=combine
  ROOT r = f32[3,4] get-tuple-element(scan), index=0
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: %combine_scalarized (x{{[.0-9]*}}: f32[], c{{[.0-9]*}}: f32[]) -> (f32[], f32[]) {
CHECK: f32[3,4] reduce-window(f32[3,4] %in, f32[] %z), window={size=1x4 pad=0_0x3_0}
)");
  ExpectSameSemantics(run);
}

TEST(AssociativeScanRewriterTest, LeftAlone) {
  // Long scan whose init is not an identity, a reverse scan, a read carry,
  // a scan not marked associative: none is rewritten.
  for (const std::string& hlo :
       {CumsumModule(40, "constant(1)"), CumsumModule(8, "constant(0)", "add", ", is_reverse=true"),
        absl::StrCat(R"(HloModule m
combine {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY main {
  in = f32[8] parameter(0)
  init = f32[] constant(0)
  scan = (f32[8], f32[]) scan(in, init), dimensions={0}, num_carries=1, is_associative=true, to_apply=combine
  ROOT r = f32[] get-tuple-element(scan), index=1
}
)"),
        absl::StrCat(R"(HloModule m
combine {
  x = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] add(x, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY main {
  in = f32[8] parameter(0)
  init = f32[] constant(0)
  scan = (f32[8], f32[]) scan(in, init), dimensions={0}, num_carries=1, to_apply=combine
  ROOT r = f32[8] get-tuple-element(scan), index=0
}
)")}) {
    PassRun run = RunPass("associative-scan-rewriter", hlo);
    EXPECT_FALSE(run.changed) << hlo;
  }
}

TEST(AssociativeScanRewriterTest, ThenScanExpanderAgrees) {
  // What the rewriter leaves, scan_expander lowers; both ways compute the
  // same as the scan.
  PassRun run = RunPass("scan_expander", CumsumModule(40, "constant(1)"));
  EXPECT_TRUE(run.changed);
  ExpectSameSemantics(run);
}

}  // namespace
}  // namespace hlogym::testing
