#include "reports/noise_stop.hpp"

#include <cmath>

namespace gpulab::report {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::noise:
      return "noise";
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
  if (n_ >= rule_.min_samples && sum_ >= rule_.min_seconds && relative_noise() < rule_.max_noise)
    return StopReason::noise;
  if (elapsed_seconds >= rule_.timeout_seconds) return StopReason::timeout;
  return StopReason::not_yet;
}

double NoiseStop::relative_noise() const {
  if (n_ < 2 || mean_ <= 0) return 0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1)) / mean_;
}

}  // namespace gpulab::report
