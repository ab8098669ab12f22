// A sweep as text (a table of each variant's median time and, where the lab models its bytes,
// effective bandwidth at every point; where the diagnosis changes; a sparkline per variant) and
// as CSV (one row per point and variant).
#pragma once

#include <cstddef>
#include <string>

#include "reports/render/style.hpp"
#include "reports/sweep.hpp"

namespace gpulab::report {

// `width`: the terminal's columns; the sparklines are drawn only where they fit in it.
std::string render_sweep_text(const Sweep& sweep, const Style& style, std::size_t width = 100);

// AXIS...,variant,role,status,median_s,min_s,max_s,stddev_s,samples,stopped,
// effective_bandwidth_Bps,roof_fraction,speedup,principal_finding
std::string sweep_csv(const Sweep& sweep);

// Eight-level block characters (▁ to █) scaled from the smallest value to the largest; a space
// where a value is absent (not positive).
std::string sparkline(const std::vector<double>& values);

}  // namespace gpulab::report
