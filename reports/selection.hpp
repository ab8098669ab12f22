// What `--variant` and `--kernel` select from a report, as a report of its own: every output
// format renders the selection, so text, JSON and CSV always show the same variants and kernels.
#pragma once

#include <string>
#include <vector>

#include "reports/report_fwd.hpp"

namespace gpulab::report {

// Keeps the variants named in `variants` (empty: all), in the report's order, and, when
// `kernel` is given, only the kernels it names (reports/kernel_name.hpp) and the variants that
// have one; `kernel` "timeline" keeps the timelines of traced variants and no kernels. Throws
// UsageError, naming `where` (the report file or the lab), for a variant or kernel it lacks.
Report select(const Report& report, const std::vector<std::string>& variants,
              const std::string& kernel, const std::string& where);

}  // namespace gpulab::report
