// The kernels' part of a report's HTML page: each kernel's launch shape, decision path,
// findings and source lines; a function of thousands of profiled launches summarized (its
// longest, its outliers, its launches counted by principal finding); a traced variant's timeline
// as a Gantt chart per stream with its figures. Part of render_html
// (reports/render/render_html.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "reports/render/render_source.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

struct Timeline;

// A variant of more profiled launches than this is summarized (many_launches_html), not shown
// launch by launch.
inline constexpr std::size_t kLaunchesShownEach = 8;

// One kernel: `launches` repeated launches of it shown once, counted.
std::string kernel_html(const Kernel& k, std::size_t launches, const SourceText& text_of);

// A profiled program's function of many launches: its longest diagnosed launch, the outliers,
// the longest launches in a table and the rest counted by principal finding.
std::string many_launches_html(const Variant& v, const SourceText& text_of);

// A traced variant's timeline: the Gantt chart, its figures, and the timeline's diagnosis.
std::string timeline_html(const Timeline& t, const std::string& variant);

}  // namespace gpulab::report
