// Summary statistics of repeated timings.
#pragma once

#include <cstddef>
#include <vector>

#include "reports/measures.hpp"

namespace gpulab::report {

// The most samples a report keeps of one timing: adaptive timing of a microsecond kernel takes
// tens of thousands, and the comparisons' robust spread (reports/diagnosis/compare.cpp) needs
// far fewer.
inline constexpr std::size_t kKeptSamples = 1000;

// Fills median, min, max, mean and (sample) stddev from all of `samples`; keeps them, or
// kKeptSamples of them evenly spaced (the first included) when there are more.
TimingStats summarize(std::vector<double> samples, int warmup, bool cold_l2);

}  // namespace gpulab::report
