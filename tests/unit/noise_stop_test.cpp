// Adaptive timing's stopping rule on timings recorded on an H100 (the labs' fixtures, 20
// samples of each variant): the running noise is the report's own (its sample standard deviation
// over its mean, computed there by summarize), and the rule stops at the first sample where
// every condition holds, or at the timeout.
#include "reports/noise_stop.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// A stand-in for the GPU: hands out a recorded run's samples, cycling, and counts what the loop
// asked for.
struct RecordedBatches {
  std::vector<double> recorded;
  std::vector<int> asked;
  std::size_t next = 0;
  std::vector<double> operator()(int count) {
    asked.push_back(count);
    std::vector<double> out;
    for (int i = 0; i < count; ++i) out.push_back(recorded[next++ % recorded.size()]);
    return out;
  }
};

TEST(SampleUntilQuiet, BatchesDoubleFromTheMinimumAndTheRuleReplayedStopsAtTheLastSample) {
  // async-copy/sync-tiles (0.14% noise, 1.16 ms a sample): 0.1 s of GPU time takes 87 samples.
  const Report r = load_report(kFixtures + "async-copy.json");
  RecordedBatches batches{samples_of(r, "sync-tiles")};
  const NoiseRule rule{0.005, 10, 0.1, 15};
  const auto quiet = sample_until_quiet(
      rule, [&](int n) { return batches(n); }, [] { return 0.0; });
  EXPECT_EQ(quiet.stopped, StopReason::noise);
  EXPECT_EQ(batches.asked, (std::vector<int>{10, 20, 40, 80})) << "10 + 20 + 40 < 87 <= 150";
  ASSERT_GT(quiet.samples.size(), 70u);
  EXPECT_LT(quiet.samples.size(), 150u) << "the last batch's samples after the stop are dropped";

  NoiseStop replay(rule);
  for (std::size_t i = 0; i < quiet.samples.size(); ++i)
    EXPECT_EQ(replay.add(quiet.samples[i], 0),
              i + 1 == quiet.samples.size() ? StopReason::noise : StopReason::not_yet)
        << "sample " << i;
}

TEST(SampleUntilQuiet, ANoisyKernelStopsOnceItsNoiseHasSettledAboveTheTarget) {
  // cuda-graphs/stream-launches: 18.6% noise over its 20 samples, never below 0.5%; given again
  // and again, the running noise levels off, as a noisy kernel's does.
  const Report r = load_report(kFixtures + "cuda-graphs.json");
  RecordedBatches batches{samples_of(r, "stream-launches")};
  NoiseStop settles(NoiseRule{0.005, 10, 0, 1e9});
  std::int64_t stopped_at = 0;
  for (std::int64_t i = 0; i < 100000 && !stopped_at; ++i)
    if (settles.add(batches.recorded[i % 20], 0) == StopReason::settled) stopped_at = i + 1;
  EXPECT_GT(stopped_at, static_cast<std::int64_t>(kSettleAfter));
  EXPECT_EQ(stopped_at % kSettleEvery, 0) << "checked every 16 samples";
  EXPECT_GT(settles.relative_noise(), 0.15);

  const auto quiet = sample_until_quiet(
      NoiseRule{0.005, 10, 0, 15}, [&](int n) { return batches(n); }, [] { return 0.0; });
  EXPECT_EQ(quiet.stopped, StopReason::settled);
  EXPECT_EQ(static_cast<std::int64_t>(quiet.samples.size()), stopped_at);
  EXPECT_STREQ(to_string(StopReason::settled), "settled");
}

TEST(SampleUntilQuiet, WithoutItsMinimumOfGpuTimeItEndsAtTheTimeoutWithBatchesCappedAtTheMaximum) {
  // Neither the target nor settling counts before the minimum of GPU time: 1e9 s never comes.
  const Report r = load_report(kFixtures + "cuda-graphs.json");
  RecordedBatches batches{samples_of(r, "stream-launches")};
  double now = 0;
  const auto quiet = sample_until_quiet(
      NoiseRule{0.005, 10, 1e9, 20}, [&](int n) { return batches(n); },
      [&] { return now += 1; });  // each batch takes a second of wall time
  EXPECT_EQ(quiet.stopped, StopReason::timeout);
  ASSERT_EQ(batches.asked.size(), 20u) << "the timeout is seen after the 20th batch";
  EXPECT_EQ(batches.asked[7], kMaxBatch) << "640 doubled is capped";
  EXPECT_EQ(batches.asked.back(), kMaxBatch);
  EXPECT_EQ(quiet.samples.size(), 10u + 20 + 40 + 80 + 160 + 320 + 640 + 1024 * 12 + 1)
      << "the timeout stops at the first sample of the batch that saw it";
}

TEST(SampleUntilQuiet, AMinimumBelowTwoStillTakesTwoSamplesAndAnEmptyBatchIsAnError) {
  RecordedBatches batches{{1e-3, 1e-3}};
  const auto quiet = sample_until_quiet(
      NoiseRule{0.005, 1, 0, 15}, [&](int n) { return batches(n); }, [] { return 0.0; });
  EXPECT_EQ(batches.asked.front(), 2);
  EXPECT_EQ(quiet.stopped, StopReason::noise);
  EXPECT_THROW(sample_until_quiet(
                   NoiseRule{}, [](int) { return std::vector<double>{}; }, [] { return 0.0; }),
               std::logic_error);
}

TEST(AdaptiveTimingInReports, TheStopIsWrittenOnlyForAdaptiveTimingAndReadBack) {
  Report r = load_report(kFixtures + "async-copy.json");
  EXPECT_FALSE(to_json(r)["variants"][0]["timing"].contains("stopped"))
      << "a fixed count's report reads as it always has";
  r.variants[0].timing.stopped = TimingStop::timeout;
  const auto text = to_json(r).dump();
  EXPECT_EQ(to_json(r)["variants"][0]["timing"]["stopped"], "timeout");
  const Report back = from_json(nlohmann::json::parse(text));
  EXPECT_EQ(back.variants[0].timing.stopped, TimingStop::timeout);
  EXPECT_EQ(back.variants[1].timing.stopped, TimingStop::count);

  auto bad = to_json(r);
  bad["variants"][0]["timing"]["stopped"] = "bored";
  try {
    from_json(bad);
    FAIL() << "an unknown stop was read";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("count, noise, settled, timeout"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpulab::report
