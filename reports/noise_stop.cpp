#include "reports/noise_stop.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpulab::report {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::noise:
      return "noise";
    case StopReason::settled:
      return "settled";
    case StopReason::timeout:
      return "timeout";
    case StopReason::not_yet:
      break;
  }
  return "not yet";
}

StopReason NoiseStop::add(double seconds, double elapsed_seconds) {
  ++n_;
  sum_ += seconds;
  const double delta = seconds - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (seconds - mean_);
  if (n_ >= 2) {
    noise_history_.push_back(relative_noise());
    if (noise_history_.size() > kNoiseHistory) noise_history_.pop_front();
  }
  if (n_ >= rule_.min_samples && sum_ >= rule_.min_seconds) {
    if (relative_noise() < rule_.max_noise) return StopReason::noise;
    if (settled()) return StopReason::settled;
  }
  if (elapsed_seconds >= rule_.timeout_seconds) return StopReason::timeout;
  return StopReason::not_yet;
}

bool NoiseStop::settled() const {
  if (noise_history_.size() <= kSettleAfter || n_ % kSettleEvery != 0) return false;
  const double latest = noise_history_.back();
  if (!(latest > 0)) return false;
  double squares = 0;
  for (double v : noise_history_) squares += (v - latest) * (v - latest);
  const double spread = std::sqrt(squares / static_cast<double>(noise_history_.size() - 1));
  return spread / latest < kSettledSpread;
}

double NoiseStop::relative_noise() const {
  if (n_ < 2 || mean_ <= 0) return 0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1)) / mean_;
}

QuietSamples sample_until_quiet(const NoiseRule& rule,
                                const std::function<std::vector<double>(int)>& time_batch,
                                const std::function<double()>& elapsed) {
  NoiseStop stop(rule);
  QuietSamples out;
  int batch = static_cast<int>(std::clamp<std::int64_t>(rule.min_samples, 2, kMaxBatch));
  while (true) {
    const std::vector<double> samples = time_batch(batch);
    if (samples.empty()) throw std::logic_error("adaptive timing: a batch gave no samples");
    const double now = elapsed();
    for (double s : samples) {
      out.samples.push_back(s);
      out.stopped = stop.add(s, now);
      if (out.stopped != StopReason::not_yet) return out;
    }
    batch = std::min(2 * batch, kMaxBatch);
  }
}

}  // namespace gpulab::report
