#include "benchmarks/kernel_baseline/interleave.h"

#include <gtest/gtest.h>

namespace onnx_light {
namespace baseline {
namespace {

// Ranks of the 95% interval from the binomial(n, 1/2) table (e.g. Conover, Practical
// Nonparametric Statistics, table A3): n = 6 -> x(1)..x(6), n = 10 -> x(2)..x(9),
// n = 20 -> x(6)..x(15), n = 100 -> x(40)..x(61).
struct IntervalCase {
  int n;
  int low_rank;  // 1-based
  int high_rank;
};

class MedianIntervalTest : public testing::TestWithParam<IntervalCase> {};

TEST_P(MedianIntervalTest, TakesTheOrderStatisticsOfTheBinomialTable) {
  const IntervalCase c = GetParam();
  std::vector<double> x;
  for (int i = c.n; i >= 1; --i) x.push_back(i);  // unsorted on purpose: ranks are values
  const MedianEstimate e = MedianInterval(x);
  EXPECT_TRUE(e.exact);
  EXPECT_EQ(e.low, c.low_rank);
  EXPECT_EQ(e.high, c.high_rank);
  EXPECT_EQ(e.median, (c.n + 1) / 2.0);
}

INSTANTIATE_TEST_SUITE_P(Table, MedianIntervalTest,
                         testing::Values(IntervalCase{6, 1, 6}, IntervalCase{10, 2, 9}, IntervalCase{20, 6, 15},
                                         IntervalCase{100, 40, 61}));

TEST(MedianInterval, FewerThanSixSamplesAreNeverExact) {
  const MedianEstimate e = MedianInterval({1.0, 1.0, 1.0, 1.0, 1.0});
  EXPECT_FALSE(e.exact);
  EXPECT_FALSE(Narrow(e, 0.5));  // even identical samples: too few to decide
  EXPECT_EQ(e.low, 1.0);
  EXPECT_EQ(e.high, 1.0);
}

TEST(MedianInterval, NarrowComparesHighOverLowWithTheWidth) {
  std::vector<double> tight, wide;
  for (int i = 0; i < 20; ++i) {
    tight.push_back(1.0 + 0.001 * i);  // interval x(6)..x(15): 1.005 .. 1.014
    wide.push_back(1.0 + 0.05 * i);    // 1.25 .. 1.70
  }
  EXPECT_TRUE(Narrow(MedianInterval(tight), 0.01));
  EXPECT_FALSE(Narrow(MedianInterval(wide), 0.05));
  EXPECT_TRUE(Narrow(MedianInterval(wide), 0.40));  // 1.70 / 1.25 = 1.36
}

TEST(BlockOrder, RotatesSoThatEveryPolicyTakesEveryPlace) {
  EXPECT_EQ(BlockOrder(0, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(BlockOrder(1, 3), (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(BlockOrder(2, 3), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(BlockOrder(3, 2), (std::vector<int>{1, 0}));
}

}  // namespace
}  // namespace baseline
}  // namespace onnx_light
