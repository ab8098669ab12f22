// Adaptive timing's stopping rule, nvbench's "stdrel" criterion (docs/measurement.md): keep
// timing until the relative standard deviation of the samples is below a target, once there
// are at least a minimum number of samples and a minimum of GPU time in them; or until that
// noise has settled above the target (an inherently noisy kernel would otherwise time until the
// timeout); stop anyway at a timeout; and say which of the three it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace gpulab::report {

// nvbench's defaults: --max-noise 0.5 (%), --min-samples 10, --min-time 0.5 (s), --timeout 15 (s).
struct NoiseRule {
  double max_noise = 0.005;  // the samples' sample standard deviation over their mean
  std::int64_t min_samples = 10;
  double min_seconds = 0.5;     // of GPU time, summed over the samples
  double timeout_seconds = 15;  // of wall time since timing began
};

// nvbench's test of settled noise: the last kNoiseHistory values of the running noise, once
// there are more than kSettleAfter of them, checked every kSettleEvery samples, vary by less
// than kSettledSpread (their standard deviation around the latest, over the latest).
inline constexpr std::size_t kNoiseHistory = 512;
inline constexpr std::size_t kSettleAfter = 64;
inline constexpr std::int64_t kSettleEvery = 16;
inline constexpr double kSettledSpread = 0.05;

enum class StopReason { not_yet, noise, settled, timeout };
const char* to_string(StopReason reason);  // "not yet", "noise", "settled", "timeout"

// Samples added one at a time (Welford's running mean and variance: no sample is kept twice).
class NoiseStop {
 public:
  explicit NoiseStop(NoiseRule rule) : rule_(rule) {}

  // Adds one timed sample (seconds), taken `elapsed_seconds` after timing began, and says
  // whether to stop now and why.
  StopReason add(double seconds, double elapsed_seconds);

  std::int64_t samples() const { return n_; }
  double seconds() const { return sum_; }
  // The sample standard deviation over the mean; 0 with fewer than two samples.
  double relative_noise() const;

 private:
  bool settled() const;

  NoiseRule rule_;
  std::int64_t n_ = 0;
  double mean_ = 0, m2_ = 0, sum_ = 0;
  std::deque<double> noise_history_;  // the running noise after each sample, the latest last
};

// Adaptive timing's loop. Asks `time_batch(n)` for n more samples (seconds, in measurement
// order) and gives them to the rule one at a time until it stops; `elapsed()` is the wall time
// since timing began. Each launch of a batch is queued before the batch is read, so a batch is
// one synchronization: the first holds the rule's minimum of samples (at least 2), each next
// one twice the last, up to kMaxBatch. The samples of a batch after the one the rule stopped at
// are dropped: the rule, replayed on what is returned, stops at its last sample.
inline constexpr int kMaxBatch = 1024;
struct QuietSamples {
  std::vector<double> samples;
  StopReason stopped = StopReason::not_yet;  // noise, settled or timeout once returned
};
QuietSamples sample_until_quiet(const NoiseRule& rule,
                                const std::function<std::vector<double>(int)>& time_batch,
                                const std::function<double()>& elapsed);

}  // namespace gpulab::report
