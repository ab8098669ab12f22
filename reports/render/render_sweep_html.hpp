// Sweeps as one self-contained HTML page (`gpulab report SWEEP.json -o page.html`): for each
// axis, line plots of each variant's median time and, where the lab models its bytes, effective
// bandwidth against the axis (a log axis where its values span decades, the copy roof as a
// horizontal line, the points where a principal finding changes marked), then the points as a
// table and where the findings change. Plain SVG, as every gpulab page: no script, no network.
#pragma once

#include <string>
#include <vector>

#include "reports/sweep.hpp"

namespace gpulab::report {

// The most plots a sweep draws per axis and chart (one per value of the other axes); the page
// says how many it left out.
inline constexpr std::size_t kMaxLinesPerAxis = 6;

std::string render_sweep_html(const std::vector<Sweep>& sweeps, const std::string& generator,
                              const std::vector<std::string>& argv);

}  // namespace gpulab::report
