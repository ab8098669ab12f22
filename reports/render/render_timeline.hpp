// The text form of traced variants' timelines: their figures side by side, the bandwidth of
// each kind of copy, and a chart of each variant's streams over time.
#pragma once

#include <string>

#include "reports/render/style.hpp"
#include "reports/report_fwd.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {

// Empty when no variant of the report has a timeline.
std::string render_timelines(const Report& report, const Style& style = {});

// One line per stream (and one for unified-memory migrations), `width` cells from the first
// activity's start to the last one's end; each cell shows what kept that lane busy longest in
// its slice of time: K kernel, > host-to-device, < device-to-host, = other copies and memsets,
// m migration, . nothing.
std::string timeline_chart(const Timeline& timeline, int width);

}  // namespace gpulab::report
