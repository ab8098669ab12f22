#include <gtest/gtest.h>

#include <vector>

#include "reports/statistics.hpp"

namespace gpulab::report {
namespace {

TEST(Summarize, OddCount) {
  const auto t = summarize({3e-3, 1e-3, 2e-3}, 5, false);
  EXPECT_EQ(t.repeat, 3);
  EXPECT_EQ(t.warmup, 5);
  EXPECT_DOUBLE_EQ(t.median, 2e-3);
  EXPECT_DOUBLE_EQ(t.min, 1e-3);
  EXPECT_DOUBLE_EQ(t.max, 3e-3);
  EXPECT_DOUBLE_EQ(t.mean, 2e-3);
  EXPECT_DOUBLE_EQ(t.stddev, 1e-3);
  EXPECT_EQ(t.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(t.samples[0], 3e-3) << "samples keep measurement order";
}

TEST(Summarize, EvenCountMedianIsMidpoint) {
  const auto t = summarize({4.0, 1.0, 3.0, 2.0}, 0, true);
  EXPECT_DOUBLE_EQ(t.median, 2.5);
  EXPECT_TRUE(t.cold_l2);
}

TEST(Summarize, EmptyGivesZeros) {
  const auto t = summarize({}, 0, false);
  EXPECT_EQ(t.repeat, 0);
  EXPECT_EQ(t.median, 0.0);
}

TEST(Summarize, ManySamplesAreAllInTheStatisticsAndKeptEvenlySpaced) {
  std::vector<double> samples;
  for (int i = 0; i < 2500; ++i) samples.push_back(i == 2499 ? 1.0 : 1e-3 * (1 + i % 2));
  const auto t = summarize(samples, 0, false);
  EXPECT_EQ(t.repeat, 2500);
  EXPECT_DOUBLE_EQ(t.max, 1.0) << "the last sample is in the statistics, though not kept";
  EXPECT_DOUBLE_EQ(t.median, 1.5e-3) << "1,250 of 1e-3, then 1,249 of 2e-3 and the 1.0";
  ASSERT_EQ(t.samples.size(), kKeptSamples);
  EXPECT_DOUBLE_EQ(t.samples[0], 1e-3);
  EXPECT_DOUBLE_EQ(t.samples[1], samples[2]) << "every 2.5th: 0, 2, 5, 7, ...";
  EXPECT_DOUBLE_EQ(t.samples[3], samples[7]);
  EXPECT_DOUBLE_EQ(t.samples.back(), samples[2497]);
}

}  // namespace
}  // namespace gpulab::report
