#include "reports/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpulab::report {

TimingStats summarize(std::vector<double> samples, int warmup, bool cold_l2) {
  TimingStats t;
  t.warmup = warmup;
  t.repeat = static_cast<int>(samples.size());
  t.cold_l2 = cold_l2;
  if (samples.size() <= kKeptSamples) {
    t.samples = samples;
  } else {
    t.samples.reserve(kKeptSamples);
    for (std::size_t i = 0; i < kKeptSamples; ++i)
      t.samples.push_back(samples[i * samples.size() / kKeptSamples]);
  }
  if (samples.empty()) return t;

  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  t.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  t.min = samples.front();
  t.max = samples.back();
  t.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double ss = 0;
    for (double s : samples) ss += (s - t.mean) * (s - t.mean);
    t.stddev = std::sqrt(ss / static_cast<double>(n - 1));
  }
  return t;
}

}  // namespace gpulab::report
