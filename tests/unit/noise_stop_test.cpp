// Adaptive timing's stopping rule on timings recorded on an H100 (the labs' fixtures, 20
// samples of each variant): the running noise is the report's own (its sample standard deviation
// over its mean, computed there by summarize), and the rule stops at the first sample where
// every condition holds, or at the timeout.
#include "reports/noise_stop.hpp"

#include <gtest/gtest.h>

#include <string>

#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

const std::string kFixtures = std::string(GPULAB_FIXTURES_DIR) + "/labs-h100/";

const std::vector<double>& samples_of(const Report& r, const std::string& variant) {
  return r.find_variant(variant)->timing.samples;
}

TEST(NoiseStop, TheRunningNoiseIsTheReportsOwn) {
  for (const char* lab : {"transpose", "atomics", "cuda-graphs", "matmul"}) {
    const Report r = load_report(kFixtures + lab + ".json");
    for (const auto& v : r.variants) {
      NoiseStop stop(NoiseRule{0, 0, 0, 1e9});  // never on noise: a target of 0
      for (double s : v.timing.samples) EXPECT_EQ(stop.add(s, 0), StopReason::not_yet);
      ASSERT_EQ(stop.samples(), 20) << lab << "/" << v.name;
      EXPECT_NEAR(stop.relative_noise(), v.timing.stddev / v.timing.mean, 1e-9)
          << lab << "/" << v.name;
    }
  }
}

TEST(NoiseStop, AQuietKernelStopsOnNoiseOnceItHasEnoughSamplesAndTime) {
  // async-copy/sync-tiles: 0.14% over its 20 samples of 1.16 ms.
  const Report r = load_report(kFixtures + "async-copy.json");
  const auto& samples = samples_of(r, "sync-tiles");
  NoiseStop stop(NoiseRule{0.005, 10, 0, 15});
  int stopped_at = 0;
  for (std::size_t i = 0; i < samples.size() && !stopped_at; ++i)
    if (stop.add(samples[i], 0.01 * static_cast<double>(i)) == StopReason::noise)
      stopped_at = static_cast<int>(i) + 1;
  EXPECT_EQ(stopped_at, 10) << "below 0.5% as soon as the minimum of samples is reached";

  // With nvbench's minimum of 0.5 s of GPU time, 20 samples of 1.16 ms are not enough.
  NoiseStop slow(NoiseRule{});
  for (double s : samples) EXPECT_EQ(slow.add(s, 0.1), StopReason::not_yet);
  EXPECT_NEAR(slow.seconds(), 0.0231, 0.0005);
}

TEST(NoiseStop, ANoisyKernelStopsOnTheTimeoutAndSaysSo) {
  // cuda-graphs/stream-launches: 18.6% noise, never below 0.5%.
  const Report r = load_report(kFixtures + "cuda-graphs.json");
  const auto& samples = samples_of(r, "stream-launches");
  NoiseStop stop(NoiseRule{0.005, 10, 0, 1.0});
  StopReason last = StopReason::not_yet;
  std::size_t i = 0;
  for (; i < samples.size() && last == StopReason::not_yet; ++i)
    last = stop.add(samples[i], 0.1 * static_cast<double>(i));
  EXPECT_EQ(last, StopReason::timeout);
  EXPECT_EQ(i, 11u) << "the sample taken at 1.0 s";
  EXPECT_GT(stop.relative_noise(), 0.05);
  EXPECT_STREQ(to_string(last), "timeout");
  EXPECT_STREQ(to_string(StopReason::noise), "noise");
}

}  // namespace
}  // namespace gpulab::report
