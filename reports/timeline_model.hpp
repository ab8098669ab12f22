// The activity trace of one launch of a variant (traced labs), as the CUPTI Activity API
// recorded it and as reports/timeline.hpp summarizes it: part of the report model
// (reports/report.hpp), on its own because the tracer (cupti/) needs no more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/diagnosis_model.hpp"

namespace gpulab::report {

enum class ActivityKind { kernel, copy, memset, migration };

// One interval of GPU work, as the CUPTI Activity API recorded it.
struct Activity {
  ActivityKind kind = ActivityKind::kernel;
  std::string name;          // kernel: function name; copy and migration: "HtoD", "DtoH", "DtoD",
                             // "HtoH", "PtoP"; memset: "memset"
  std::uint32_t stream = 0;  // CUDA stream id (0 for migrations, which belong to no stream)
  std::uint32_t device = 0;  // the GPU it ran on (CUDA device index); stream ids are per device
  double start = 0;          // seconds since the trace's first activity began
  double end = 0;
  std::uint64_t bytes = 0;         // copies, memsets, migrations
  std::string source_memory;       // copies: "pageable", "pinned", "device", "managed", "array",
  std::string destination_memory;  // "unknown"; empty for kernels
  std::string cause;               // migrations: "on-demand" (caused by a GPU page fault, including
                                   // the driver's prefetch around it), "prefetch" (asked for),
                                   // "eviction", "other"
  std::uint32_t records = 1;       // migration records merged into this interval
};

// Unified-memory events that are counts rather than intervals.
struct UnifiedMemoryCounts {
  bool available = false;  // the unified-memory counters were enabled
  std::string note;        // why not, or what the device did not deliver
  std::uint64_t cpu_page_faults = 0;
  std::optional<std::uint64_t> gpu_page_faults;  // absent: no GPU fault records delivered
};

// Figures derived from the activities (reports/timeline.hpp): "transfers" are copies and
// migrations a program asked for (prefetches); on-demand migrations are counted on their own.
struct CopyRate {
  std::string direction;    // "HtoD", "DtoH", ...
  std::string host_memory;  // "pageable", "pinned", "managed" (migrations), ...
  std::uint64_t bytes = 0;
  int count = 0;
  double busy_seconds = 0;  // union of the intervals
  double bandwidth = 0;     // bytes / busy_seconds
};

struct TimelineSummary {
  double span_seconds = 0;               // first start to last end
  double kernel_seconds = 0;             // union of kernel intervals
  double transfer_seconds = 0;           // union of copy, memset and requested-migration intervals
  double on_demand_seconds = 0;          // union of on-demand migration intervals
  double busy_seconds = 0;               // union of everything
  double overlap_fraction = 0;           // |kernels ∩ transfers| / span
  double idle_fraction = 0;              // 1 - busy / span
  double exposed_transfer_fraction = 0;  // |transfers minus kernels| / span
  double on_demand_fraction = 0;         // on_demand_seconds / span
  int kernels = 0;
  int copies = 0;
  double mean_kernel_seconds = 0;
  std::uint64_t migrated_htod_bytes = 0;
  std::uint64_t migrated_dtoh_bytes = 0;
  std::uint64_t on_demand_bytes = 0;
  std::vector<CopyRate> rates;
  // Communication kernels (NCCL's, named nccl*), per GPU: the mean over the GPUs of the union of
  // their intervals, the share of that time other kernels of the same GPU ran alongside, and,
  // where the work model names a collective, its bandwidth over that time as nccl-tests define
  // it (algorithm: bytes / time; bus: algorithm x 2 (ranks - 1) / ranks, what each link carried).
  double communication_seconds = 0;
  double communication_overlap_fraction = 0;
  double algorithm_bandwidth = 0;  // B/s
  double bus_bandwidth = 0;        // B/s
};

// An NVTX range of a traced program, on the CPU thread that opened it: its own track, apart from
// the GPU's activities (no summary counts it).
struct RangeSpan {
  std::string path;          // its parents and itself (reports/nvtx_filter.hpp): "train/step"
  std::uint32_t thread = 0;  // the operating system's thread id
  double start = 0;          // seconds on the activities' clock, from their first
  double end = 0;
};

struct Timeline {
  std::vector<Activity> activities;  // sorted by start
  std::vector<RangeSpan> ranges;     // sorted by start
  UnifiedMemoryCounts unified_memory;
  std::string kernel_records;          // "concurrent" (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
  double trace_seconds = 0;            // wall time of the traced launch, tracing included
  // A traced program's: the CUPTI timestamp (ns) its times count from. Processes on one host
  // read one clock, so the ranks of a job on one host line up by it. 0: unknown.
  std::uint64_t origin_ns = 0;
  TimelineSummary summary;             // derived
  std::optional<Diagnosis> diagnosis;  // the timeline's part of the diagnosis
};

const char* to_string(ActivityKind kind);
std::optional<ActivityKind> activity_kind_from_string(const std::string& s);

}  // namespace gpulab::report
