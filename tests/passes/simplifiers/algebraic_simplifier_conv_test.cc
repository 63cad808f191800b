// algsimp's convolution rewrites: operand swap, pad folding, depthwise
// convolution -> multiply, empty convolutions; each checked for its shape and
// for computing the same as the original on the evaluator.
#include <string>

#include "passes/control_flow_test_util.h"
#include "passes/pass_test_util.h"
#include "passes/registry.h"

namespace hlogym::testing {
namespace {

// Runs algsimp, expects a change, the CHECK lines and the same results as
// the original on random inputs.
void ExpectRewrite(std::string_view hlo, std::string_view checks) {
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_TRUE(run.changed) << run.after;
  EXPECT_CHECKS(run.after, checks);
  ExpectSameSemantics(run);
}

void ExpectUnchanged(std::string_view hlo) {
  PassRun run = RunPass("algsimp", hlo);
  EXPECT_FALSE(run.changed) << run.after;
}

// conv(x: f32[X], k: f32[K]) -> f32[OUT] with the given window and labels.
std::string Conv(std::string_view x, std::string_view k, std::string_view out,
                 std::string_view window, std::string_view labels = "b01f_01io->b01f",
                 std::string_view extra = "") {
  std::string text = "HloModule m\nENTRY main {\n  x = f32[";
  for (std::string_view part :
       {x, std::string_view("] parameter(0)\n  k = f32["), k,
        std::string_view("] parameter(1)\n  ROOT c = f32["), out,
        std::string_view("] convolution(x, k), window={"), window,
        std::string_view("}, dim_labels="), labels, extra, std::string_view("\n}\n")}) {
    text += part;
  }
  return text;
}

// ------------------------------ operand swap -------------------------------

TEST(AlgebraicSimplifierConvTest, SwapsAKernelLargerThanTheInput) {
  // A 3x3 kernel over a 2x2 input (padded to keep 2x2): 9 taps per output
  // become 4 once the input is the window.
  ExpectRewrite(Conv("1,2,2,4", "3,3,4,8", "1,2,2,8", "size=3x3 pad=1_1x1_1"), R"(
CHECK: %reverse = f32[3,3,4,8] reverse(f32[3,3,4,8] %k), dimensions={0,1}
CHECK: ROOT {{.*}} = f32[1,2,2,8] convolution(f32[3,3,4,8] %reverse, f32[1,2,2,4] %x), window={size=2x2 rhs_reversal=1x1}, dim_labels=01fb_o01i->f01b
)");
}

TEST(AlgebraicSimplifierConvTest, SwapKeepsStridesAndSwapsDilations) {
  // A transposed-convolution-like window (lhs_dilate) with a dilated kernel.
  ExpectRewrite(Conv("2,2,3,3", "3,3,3,5", "2,4,1,5",
                     "size=3x3 pad=2_2x0_0 lhs_dilate=1x2 rhs_dilate=1x2 stride=1x1"),
                R"(
CHECK: reverse(f32[3,3,3,5] %k), dimensions={0,1}
CHECK: convolution({{.*}}), window={size=2x3 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=1x2 rhs_reversal=1x1}
)");
  ExpectRewrite(Conv("1,2,1,2", "3,1,2,2", "1,1,1,2", "size=3x1 pad=1_1x0_0 stride=2x1"), R"(
CHECK: reverse(f32[3,1,2,2] %k), dimensions={0}
CHECK: window={size=2x1 stride=2x1 rhs_reversal=1x0}
)");
}

TEST(AlgebraicSimplifierConvTest, SwapOfAReversedKernelNeedsNoReverse) {
  ExpectRewrite(Conv("1,2,2,4", "3,3,4,8", "1,2,2,8", "size=3x3 pad=1_1x1_1 rhs_reversal=1x1"),
                R"(
CHECK-NOT: reverse(
CHECK: convolution(f32[3,3,4,8] %k, f32[1,2,2,4] %x)
)");
}

TEST(AlgebraicSimplifierConvTest, SwappedKernelReverseMergesWithAParsedOneUnderCse) {
  // A backprop-style module already holds reverse(k); the swap builds another
  // reverse(k), which must compare equal to the parsed one so cse merges them.
  const std::string hlo = R"(HloModule m
ENTRY main {
  x = f32[1,2,2,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  y = f32[1,8,8,8] parameter(2)
  rk = f32[3,3,4,8] reverse(k), dimensions={0,1}
  g = f32[1,8,8,4] convolution(y, rk), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f
  c = f32[1,2,2,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT out = (f32[1,8,8,4], f32[1,2,2,8]) tuple(g, c)
}
)";
  PassRun swapped = RunPass("algsimp", hlo);
  ASSERT_TRUE(swapped.changed);
  EXPECT_CHECKS(swapped.after, "CHECK: reverse(\nCHECK: reverse(");
  PassRun merged = RunPass("cse", swapped.after);
  EXPECT_TRUE(merged.changed);
  EXPECT_CHECKS(merged.after, "CHECK: reverse(\nCHECK-NOT: reverse(");
}

TEST(AlgebraicSimplifierConvTest, DoesNotSwapWhenTheKernelIsSmaller) {
  ExpectUnchanged(Conv("1,8,8,4", "3,3,4,8", "1,8,8,8", "size=3x3 pad=1_1x1_1"));
  // Equal products: no gain, no swap.
  ExpectUnchanged(Conv("1,2,2,4", "2,2,4,8", "1,1,1,8", "size=2x2"));
  // Grouped convolutions are left alone.
  ExpectUnchanged(Conv("1,2,2,4", "3,3,2,8", "1,2,2,8", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
                       ", feature_group_count=2"));
}

TEST(AlgebraicSimplifierConvTest, ForXlaLeavesTheSwapToXla) {
  // The swap comes after XLA:CPU's convolution canonicalization, which would
  // transpose and copy a swapped convolution handed back to it: a module for
  // XLA keeps its convolutions unswapped, in algsimp and in the pipeline.
  const std::string hlo = Conv("1,2,2,4", "3,3,4,8", "1,2,2,8", "size=3x3 pad=1_1x1_1");
  for (PassTarget target : {PassTarget::kHlogym, PassTarget::kXla}) {
    SCOPED_TRACE(target == PassTarget::kXla ? "for XLA" : "for hlogym");
    absl::StatusOr<std::unique_ptr<Pass>> algsimp = PassRegistry::Builtin(target).Create("algsimp");
    ASSERT_TRUE(algsimp.ok());
    absl::StatusOr<std::unique_ptr<Pass>> pipeline = CreatePipeline("xla-cpu-default", target);
    ASSERT_TRUE(pipeline.ok());
    absl::StatusOr<std::unique_ptr<Pass>> listed = CreatePassList("cse,algsimp", target);
    ASSERT_TRUE(listed.ok());
    for (Pass* pass : {algsimp->get(), pipeline->get(), listed->get()}) {
      PassRun run = RunPass(*pass, hlo);
      EXPECT_EQ(run.changed, target == PassTarget::kHlogym) << pass->name();
      EXPECT_EQ(run.after.find("reverse(") == std::string::npos, target == PassTarget::kXla)
          << pass->name() << "\n"
          << run.after;
    }
  }
}

TEST(AlgebraicSimplifierConvTest, ContractionDimensionsStayAsTheyAre) {
  // Dimension 0 is a full contraction (kernel = input = 2, no padding): it
  // is neither swapped nor counted; dimension 1 decides (3 taps vs 1).
  ExpectRewrite(Conv("1,2,1,4", "2,3,4,8", "1,1,1,8", "size=2x3 pad=0_0x1_1"), R"(
CHECK: reverse(f32[2,3,4,8] %k), dimensions={1}
CHECK: window={size=2x1 pad=0_0x-1_-1 rhs_reversal=0x1}
)");
}

// ------------------------------- pad folding -------------------------------

TEST(AlgebraicSimplifierConvTest, FoldsAZeroPadOfTheInputIntoTheWindow) {
  ExpectRewrite(R"(HloModule m
ENTRY main {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  zero = f32[] constant(0)
  p = f32[1,9,7,4] pad(x, zero), padding=0_0x0_0_1x1_1x0_0
  ROOT c = f32[1,7,5,8] convolution(p, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)",
                R"(
CHECK-NOT: pad(
CHECK: ROOT {{.*}} convolution(f32[1,5,5,4] %x, f32[3,3,4,8] %k), window={size=3x3 pad=0_0x1_1 lhs_dilate=2x1}
)");
  // A pad of a nonzero value, or of the feature dimension, stays.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  one = f32[] constant(1)
  p = f32[1,7,7,4] pad(x, one), padding=0_0x1_1x1_1x0_0
  ROOT c = f32[1,5,5,8] convolution(p, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)");
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  x = f32[1,5,5,3] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  zero = f32[] constant(0)
  p = f32[1,5,5,4] pad(x, zero), padding=0_0x0_0x0_0x0_1
  ROOT c = f32[1,3,3,8] convolution(p, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)");
}

TEST(AlgebraicSimplifierConvTest, FoldsInteriorKernelPaddingIntoWindowDilation) {
  ExpectRewrite(R"(HloModule m
ENTRY main {
  x = f32[1,6,6,4] parameter(0)
  k = f32[2,2,4,8] parameter(1)
  zero = f32[] constant(0)
  p = f32[3,3,4,8] pad(k, zero), padding=0_0_1x0_0_1x0_0x0_0
  ROOT c = f32[1,4,4,8] convolution(x, p), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)",
                R"(
CHECK-NOT: pad(
CHECK: ROOT {{.*}} convolution(f32[1,6,6,4] %x, f32[2,2,4,8] %k), window={size=2x2 rhs_dilate=2x2}
)");
  // Edge padding of the kernel stays.
  ExpectUnchanged(R"(HloModule m
ENTRY main {
  x = f32[1,6,6,4] parameter(0)
  k = f32[2,2,4,8] parameter(1)
  zero = f32[] constant(0)
  p = f32[3,2,4,8] pad(k, zero), padding=1_0x0_0x0_0x0_0
  ROOT c = f32[1,4,5,8] convolution(x, p), window={size=3x2}, dim_labels=b01f_01io->b01f
}
)");
}

// ---------------------------- conv -> multiply -----------------------------

TEST(AlgebraicSimplifierConvTest, DepthwiseOneByOneIsAMultiply) {
  ExpectRewrite(Conv("2,4,4,3", "1,1,1,3", "2,4,4,3", "size=1x1", "b01f_01io->b01f",
                     ", feature_group_count=3"),
                R"(
CHECK-NOT: convolution(
CHECK: f32[3] reshape(f32[1,1,1,3] %k)
CHECK: f32[2,4,4,3] broadcast(f32[3] %{{.*}}), dimensions={3}
CHECK: ROOT {{.*}} = f32[2,4,4,3] multiply(f32[2,4,4,3] %x, f32[2,4,4,3] %{{.*}})
)");
}

TEST(AlgebraicSimplifierConvTest, DepthwiseOverTheWholeInputIsAMultiplyAndAReduce) {
  // The kernel covers the input's spatial extent: output spatial size 1.
  ExpectRewrite(Conv("2,3,3,4", "3,3,1,4", "2,1,1,4", "size=3x3", "b01f_01io->b01f",
                     ", feature_group_count=4"),
                R"(
CHECK: multiply(
CHECK: f32[2,4] reduce({{.*}}), dimensions={1,2}
CHECK: ROOT {{.*}} = f32[2,1,1,4] reshape(
)");
  // Channel-first labels: both operands are transposed into the output order.
  ExpectRewrite(Conv("2,4,3,3", "4,1,3,3", "2,4,1,1", "size=3x3", "bf01_oi01->bf01",
                     ", feature_group_count=4"),
                R"(
CHECK: multiply(
CHECK: reduce({{.*}}), dimensions={2,3}
)");
  // A channel multiplier of 2 is not a multiply.
  ExpectUnchanged(Conv("2,4,4,3", "1,1,1,6", "2,4,4,6", "size=1x1", "b01f_01io->b01f",
                       ", feature_group_count=3"));
}

TEST(AlgebraicSimplifierConvTest, EmptyConvolutionIsZeros) {
  PassRun run = RunPass("algsimp", Conv("0,4,4,3", "3,3,3,5", "0,2,2,5", "size=3x3"));
  EXPECT_TRUE(run.changed);
  EXPECT_CHECKS(run.after, R"(
CHECK-NOT: convolution(
CHECK: ROOT {{.*}} = f32[0,2,2,5] broadcast(
)");
}

}  // namespace
}  // namespace hlogym::testing
