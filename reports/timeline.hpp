// Figures derived from an activity trace: how long kernels, transfers and on-demand migrations
// kept the GPU busy, how much of that time they overlapped, how long the GPU sat idle, and the
// bandwidth of each kind of copy. Pure interval arithmetic over report::Activity; the tracer
// (cupti/activity_tracer.hpp) records the activities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/metric_catalogue.hpp"
#include "reports/report_fwd.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {

// The figures of a summary that CSV output and comparisons list, in that order.
struct TimelineFigure {
  const char* name;
  metrics::Unit unit;
  double (*get)(const TimelineSummary&);
};
const std::vector<TimelineFigure>& timeline_figures();
const TimelineFigure* find_timeline_figure(const std::string& name);

// Communication: a kernel of NCCL's (named nccl...), which moves data between GPUs rather than
// computing.
bool is_communication(const Activity& a);

// Whether a timeline's rows must name their GPU: some activity ran on a GPU other than the
// first (stream ids are per GPU, so two GPUs' streams may share one).
bool names_devices(const std::vector<Activity>& activities);

// The row an activity is drawn in, by the text chart, the HTML chart and the trace alike: its
// GPU's stream, or the one row of unified-memory migrations, which belong to no stream. Rows
// sort by GPU, then stream, migrations last.
struct TimelineRow {
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  bool migrations = false;
};
TimelineRow row_of(const Activity& a);
bool operator<(const TimelineRow& a, const TimelineRow& b);
bool operator==(const TimelineRow& a, const TimelineRow& b);
// "stream 14", "GPU 1 · stream 14" where the rows name their GPU, "unified memory".
std::string row_label(const TimelineRow& row, bool name_devices);

// Transfers are copies, memsets and migrations a program asked for (prefetches, evictions);
// on-demand migrations (a page fault made the driver move the page) are counted on their own,
// because the kernel that faulted waits on them rather than overlapping them.
TimelineSummary summarize(const Timeline& timeline);

// Fills the summary of every variant that has a timeline.
void summarize_timelines(Report& report);

}  // namespace gpulab::report
