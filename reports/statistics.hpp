// Summary statistics of repeated timings.
#pragma once

#include <vector>

#include "reports/measures.hpp"

namespace gpulab::report {

// Fills median, min, max, mean and (sample) stddev from `samples`; keeps the samples.
TimingStats summarize(std::vector<double> samples, int warmup, bool cold_l2);

}  // namespace gpulab::report
