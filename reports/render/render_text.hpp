// The text form of a run report: a header (lab, device, roofs, work model), the timing table
// (baseline first, speedups over it), then the counters table with one column per kernel.
#pragma once

#include <string>

#include "reports/render/style.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

std::string render_text(const Report& report, const Style& style = {});

}  // namespace gpulab::report
