// How an activity trace's raw records become a timeline's activities: the records of the warm-up
// dropped, the rest sorted, a migration's many small records merged into one interval, kernel
// names demangled and times made relative to the first activity. Plain data in and out, so that
// it is tested without a GPU; cupti/activity_tracer.cpp collects the records.
#pragma once

#include <cstdint>
#include <vector>

#include "reports/timeline_model.hpp"

namespace gpulab::report {

// An activity with the tracer's absolute nanosecond timestamps: times relative to the first
// activity are known only once every record is in, and a double cannot hold an absolute ns
// timestamp. `activity.start` and `activity.end` are unset until assembly.
struct TraceRecord {
  Activity activity;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint32_t correlation_id = 0;  // CUPTI's, joining a kernel to its launch; 0 if none
  // Kernels only: the resources the driver says the kernel holds (0: not said).
  int registers_per_thread = 0;
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t local_bytes_per_thread = 0;
};

// The driver reports a migration as many small records (a few pages each); back-to-back ones
// are one transfer as far as the timeline is concerned.
inline constexpr std::uint64_t kMigrationMergeGapNs = 5000;

// `records` sorted by start. Migrations of one direction and cause that overlap or follow each
// other within kMigrationMergeGapNs become one (bytes and record counts added up); another
// activity in between does not stop them from merging, only the gap between them counts.
std::vector<TraceRecord> merge_migrations(std::vector<TraceRecord> records);

// The activities of the records that began at or after `since` (ns; earlier ones belong to the
// warm-up), sorted by start (then kind), migrations merged, kernel names demangled for display,
// in seconds since the earliest of them began.
std::vector<Activity> assemble_activities(std::vector<TraceRecord> records, std::uint64_t since);

// What a trace counted rather than recorded as intervals.
struct TraceCounts {
  std::uint64_t cpu_page_faults = 0;
  std::uint64_t gpu_page_faults = 0;
  std::uint64_t lost = 0;   // records dropped by the tracer, or delivered without timestamps
  bool unreadable = false;  // a buffer held a record the tracer could not decode

  TraceCounts& operator+=(const TraceCounts& other);
};

// Puts `counts` into the timeline's unified-memory figures, once its activities are assembled,
// and adds to its note what the trace is missing: GPU page faults when there were on-demand
// migrations but no fault records, lost records, an unreadable buffer.
void add_trace_counts(Timeline& timeline, const TraceCounts& counts);

}  // namespace gpulab::report
