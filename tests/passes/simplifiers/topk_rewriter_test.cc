// topk-rewriter: sort + slices of the first k -> custom-call TopK.
#include "passes/control_flow_test_util.h"

namespace hlogym::testing {
namespace {

// A 2-D f32 sort with an index iota, both outputs sliced to k=3 along
// dimension `dim`, compared by the total-order key comparison-expander
// leaves.
std::string SortThenSlice(const std::string& type, const std::string& dims, const std::string& iota,
                          const std::string& sort_dim, const std::string& sliced_dims,
                          const std::string& slice) {
  return R"(HloModule m
gt {
  a = )" +
         type + R"([] parameter(0)
  b = )" +
         type + R"([] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT g = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = )" +
         type + "[" + dims + R"(] parameter(0)
  i = s32[)" +
         dims + "] iota(), iota_dimension=" + iota + R"(
  s = ()" +
         type + "[" + dims + "], s32[" + dims + R"(]) sort(x, i), dimensions={)" + sort_dim +
         R"(}, is_stable=true, to_apply=gt
  v = )" +
         type + "[" + dims + R"(] get-tuple-element(s), index=0
  vs = )" +
         type + "[" + sliced_dims + "] slice(v), slice=" + slice + R"(
  j = s32[)" +
         dims + R"(] get-tuple-element(s), index=1
  js = s32[)" +
         sliced_dims + "] slice(j), slice=" + slice + R"(
  ROOT t = ()" +
         type + "[" + sliced_dims + "], s32[" + sliced_dims + R"(]) tuple(vs, js)
}
)";
}

TEST(TopkRewriterTest, LastDimensionBecomesCustomCall) {
  PassRun run =
      RunPass("topk-rewriter", SortThenSlice("f32", "4,16", "1", "1", "4,3", "{[0:4], [0:3]}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (f32[4,3], s32[4,3]) custom-call(f32[4,16] %x), custom_call_target="TopK", {{.*}}gt
CHECK: f32[4,3] get-tuple-element({{.*}}), index=0
CHECK: s32[4,3] get-tuple-element({{.*}}), index=1
CHECK: ROOT {{.*}} tuple(
)");
  // As in XLA the sort and slices stay behind for dce.
  EXPECT_NE(run.after.find(" sort("), std::string::npos);
  ExpectSameSemantics(run);
}

TEST(TopkRewriterTest, FirstDimensionIsTransposed) {
  PassRun run =
      RunPass("topk-rewriter", SortThenSlice("f32", "16,4", "0", "0", "3,4", "{[0:3], [0:4]}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[4,16] transpose(f32[16,4] %x), dimensions={1,0}
CHECK: (f32[4,3], s32[4,3]) custom-call(
CHECK: f32[3,4] transpose(
CHECK: s32[3,4] transpose(
)");
  ExpectSameSemantics(run);
}

TEST(TopkRewriterTest, HigherRankIsReshapedToBatchRows) {
  PassRun run = RunPass("topk-rewriter",
                        SortThenSlice("f32", "2,3,8", "2", "2", "2,3,3", "{[0:2], [0:3], [0:3]}"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: f32[6,8] reshape(f32[2,3,8] %x)
CHECK: (f32[6,3], s32[6,3]) custom-call(
CHECK: f32[2,3,3] reshape(
CHECK: s32[2,3,3] reshape(
)");
  ExpectSameSemantics(run);
}

TEST(TopkRewriterTest, Bf16OnlyInGpuInstance) {
  std::string hlo = SortThenSlice("bf16", "4,16", "1", "1", "4,3", "{[0:4], [0:3]}");
  EXPECT_FALSE(RunPass("topk-rewriter", hlo).changed);
  PassRun run = RunPass("topk-rewriter-all", hlo);
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (bf16[4,3], s32[4,3]) custom-call(
)");
  ExpectSameSemantics(run);
}

TEST(TopkRewriterTest, TotalOrderKeyComparatorAndValuesOnlySort) {
  PassRun run = RunPass("topk-rewriter", R"(HloModule m
key_gt {
  a = f32[] parameter(0)
  ba = s32[] bitcast-convert(a)
  zero = s32[] constant(0)
  na = pred[] compare(ba, zero), direction=LT
  max = s32[] constant(2147483647)
  xa = s32[] xor(max, ba)
  ka = s32[] select(na, xa, ba)
  b = f32[] parameter(1)
  bb = s32[] bitcast-convert(b)
  nb = pred[] compare(bb, zero), direction=LT
  xb = s32[] xor(bb, max)
  kb = s32[] select(nb, xb, bb)
  ROOT g = pred[] compare(ka, kb), direction=GT
}
ENTRY main {
  x = f32[32] parameter(0)
  s = f32[32] sort(x), dimensions={0}, to_apply=key_gt
  ROOT h = f32[5] slice(s), slice={[0:5]}
}
)");
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK: (f32[5], s32[5]) custom-call(f32[32] %x), custom_call_target="TopK", {{.*}}key_gt
CHECK: ROOT {{.*}} f32[5] get-tuple-element({{.*}}), index=0
)");
  ExpectSameSemantics(run);
}

TEST(TopkRewriterTest, NotATopKNoChange) {
  // Slices that do not start at 0, different k per output, an iota along the
  // wrong dimension, a less-than comparator, a middle sort dimension.
  for (const std::string& hlo : {
           SortThenSlice("f32", "4,16", "1", "1", "4,3", "{[0:4], [1:4]}"),
           SortThenSlice("f32", "4,16", "0", "1", "4,3", "{[0:4], [0:3]}"),
           SortThenSlice("f32", "4,16", "1", "1", "2,3", "{[0:2], [0:3]}"),
           SortThenSlice("s32", "4,16", "1", "1", "4,3", "{[0:4], [0:3]}"),
           SortThenSlice("f32", "2,8,3", "1", "1", "2,3,3", "{[0:2], [0:3], [0:3]}"),
       }) {
    PassRun run = RunPass("topk-rewriter-all", hlo);
    EXPECT_FALSE(run.changed) << hlo;
  }
  std::string lt = SortThenSlice("f32", "4,16", "1", "1", "4,3", "{[0:4], [0:3]}");
  lt.replace(lt.find("direction=GT"), 12, "direction=LT");
  EXPECT_FALSE(RunPass("topk-rewriter", lt).changed);
  // A sort with a non-slice user.
  EXPECT_FALSE(RunPass("topk-rewriter", R"(HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = f32[8] parameter(0)
  s = f32[8] sort(x), dimensions={0}, to_apply=gt
  h = f32[2] slice(s), slice={[0:2]}
  n = f32[8] negate(s)
  ROOT t = (f32[2], f32[8]) tuple(h, n)
}
)")
                   .changed);
}

}  // namespace
}  // namespace hlogym::testing
