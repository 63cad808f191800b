// Cost features follow XLA's HloCostAnalysis conventions.
#include "analysis/cost_analysis.h"

#include <gtest/gtest.h>

#include "text/parser.h"

namespace hlogym {
namespace {

CostFeatures CostOf(std::string_view text) {
  auto module = ParseModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  return ComputeModuleCost(**module);
}

TEST(CostAnalysisTest, ElementwiseCountsFlopsOrTranscendentals) {
  CostFeatures cost = CostOf(R"(
HloModule m
ENTRY main {
  a = f32[4] parameter(0)
  e = f32[4] exponential(a)
  t = f32[4] tanh(e)
  ROOT s = f32[4] add(t, a)
})");
  EXPECT_EQ(cost.flops, 4);
  EXPECT_EQ(cost.transcendentals, 8);
  // exponential, tanh and add each read and write f32[4] (16 bytes);
  // add reads two operands.
  EXPECT_EQ(cost.bytes_accessed, 32 + 32 + 48);
}

TEST(CostAnalysisTest, DotCountsTwoFlopsPerMultiplyAdd) {
  CostFeatures cost = CostOf(R"(
HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_EQ(cost.flops, 2 * 8 * 3);
  EXPECT_EQ(cost.bytes_accessed, 24 + 48 + 32);
}

TEST(CostAnalysisTest, ReduceAppliesItsComputationPerReducedElement) {
  CostFeatures cost = CostOf(R"(
HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[8,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[5] reduce(a, z), dimensions={0}, to_apply=sum
})");
  EXPECT_EQ(cost.flops, 40 - 5);
}

TEST(CostAnalysisTest, WhileAddsBodyAndConditionOnce) {
  CostFeatures cost = CostOf(R"(
HloModule m
cond {
  p = f32[3] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = f32[3] parameter(0)
  ROOT l = f32[3] log(p)
}
ENTRY main {
  a = f32[3] parameter(0)
  ROOT w = f32[3] while(a), condition=cond, body=body
})");
  EXPECT_EQ(cost.transcendentals, 3);
  EXPECT_EQ(cost.flops, 0);
}

}  // namespace
}  // namespace hlogym
