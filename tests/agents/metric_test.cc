// The paper's metric as docs/ARCHITECTURE.md defines it, on hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>

#include "agents/evaluation.h"

namespace hlogym {
namespace {

TEST(MetricTest, GeomeanOfRatiosMinusOne) {
  // Ratios 2 and 0.5: geomean 1, gain 0.
  MetricSummary m = ComputeMetric({{"a", 100, 90, 80}, {"b", 100, 80, 90}});
  EXPECT_EQ(m.counted, 2);
  EXPECT_NEAR(m.geomean_ratio, 1.0, 1e-12);
  EXPECT_NEAR(m.gain, 0.0, 1e-12);
  EXPECT_NEAR(m.ratios[0], 2.0, 1e-12);
  EXPECT_NEAR(m.ratios[1], 0.5, 1e-12);
  EXPECT_TRUE(m.flagged.empty());
  EXPECT_TRUE(m.apart.empty());
  EXPECT_EQ(m.best, "a");
  EXPECT_EQ(m.worst, "b");
  EXPECT_EQ(m.r_le_d, 1);
  EXPECT_DOUBLE_EQ(m.share_r_le_d, 0.5);
}

TEST(MetricTest, DefaultItselfScoresZero) {
  MetricSummary m = ComputeMetric({{"a", 100, 90, 90}, {"b", 7, 3, 3}});
  EXPECT_NEAR(m.gain, 0.0, 1e-12);
  EXPECT_EQ(m.r_le_d, 2);
  EXPECT_DOUBLE_EQ(m.share_r_le_d, 1.0);
}

TEST(MetricTest, EdgeCases) {
  MetricSummary m = ComputeMetric({
      {"a", 100, 80, 70},  // 30/20 = 1.5
      {"b", 100, 90, 95},  // 5/10 = 0.5
      {"c", 50, 40, 50},   // 0 -> 0.01, flagged
      {"d", 30, 30, 25},   // D == I: apart, R < I
      {"e", 30, 30, 30},   // D == I: apart, R == I
      {"f", 20, 25, 20},   // D > I: apart too
      {"g", 10, 5, 12},    // -2/5 < 0 -> 0.01, flagged
  });
  EXPECT_EQ(m.benchmarks, 7);
  EXPECT_EQ(m.counted, 4);
  const double geomean = std::pow(1.5 * 0.5 * 0.01 * 0.01, 0.25);
  EXPECT_NEAR(m.geomean_ratio, geomean, 1e-12);
  EXPECT_NEAR(m.gain, geomean - 1, 1e-12);
  ASSERT_EQ(m.flagged.size(), 2u);
  EXPECT_EQ(m.flagged[0], "c");
  EXPECT_EQ(m.flagged[1], "g");
  ASSERT_EQ(m.apart.size(), 3u);
  EXPECT_EQ(m.apart[0].name, "d");
  EXPECT_TRUE(m.apart[0].r_below_i);
  EXPECT_FALSE(m.apart[0].d_above_i);
  EXPECT_EQ(m.apart[1].name, "e");
  EXPECT_FALSE(m.apart[1].r_below_i);
  EXPECT_EQ(m.apart[2].name, "f");
  EXPECT_TRUE(m.apart[2].d_above_i);
  EXPECT_TRUE(std::isnan(m.ratios[3]));
  EXPECT_NEAR(m.ratios[6], -0.4, 1e-12);  // unclamped in the per-benchmark ratios
  // R <= D: a, d, e, f.
  EXPECT_EQ(m.r_le_d, 4);
  EXPECT_EQ(m.r_lt_d, 3);  // a, d, f
  EXPECT_NEAR(m.share_r_le_d, 4.0 / 7.0, 1e-12);
  EXPECT_EQ(m.best, "a");
  EXPECT_DOUBLE_EQ(m.best_ratio, 1.5);
  EXPECT_EQ(m.worst, "g");
  EXPECT_NEAR(m.worst_ratio, -0.4, 1e-12);
}

TEST(MetricTest, NothingCounted) {
  MetricSummary m = ComputeMetric({{"a", 10, 10, 9}});
  EXPECT_EQ(m.counted, 0);
  EXPECT_TRUE(std::isnan(m.gain));
  EXPECT_TRUE(m.best.empty());
  ASSERT_EQ(m.apart.size(), 1u);
  EXPECT_TRUE(m.apart[0].r_below_i);
  MetricSummary empty = ComputeMetric({});
  EXPECT_EQ(empty.benchmarks, 0);
  EXPECT_TRUE(std::isnan(empty.gain));
}

TEST(MetricTest, AgainstRealXla) {
  MetricSummary m =
      ComputeMetric({{"a", 100, 90, 80, 80}, {"b", 100, 90, 90, 95}, {"c", 10, 9, 9}});
  EXPECT_EQ(m.with_x, 2);
  EXPECT_EQ(m.r_le_x, 2);
  EXPECT_EQ(m.x_counted, 2);
  // (20/20 * 10/5)^(1/2) - 1
  EXPECT_NEAR(m.gain_over_x, std::sqrt(2.0) - 1, 1e-12);
}

}  // namespace
}  // namespace hlogym
