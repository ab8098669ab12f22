// Where a lab run's wall time went (Report::phases): one line for a lab, a table for `run --all`,
// as `run --verbose` prints them.
#pragma once

#include <string>
#include <vector>

#include "reports/render/style.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// "where the time went: device 12.0 ms · setup 410 ms · checks 1.20 s · timing 300 ms (1.92 s)";
// empty for a report without phases (a profiled program, or one from before they were kept).
std::string phases_line(const Report& r);

// One row per lab with phases: its seconds in each phase (every phase any of them has, in the
// order first met) and its total, then the column totals.
std::string render_phase_table(const std::vector<Report>& reports, const Style& style);

}  // namespace gpulab::report
