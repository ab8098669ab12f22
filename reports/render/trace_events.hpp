// The activity timelines of a report as Chrome trace-event JSON, the format Perfetto and
// chrome://tracing open (and PyTorch's profiler writes): one complete event ("ph": "X", "ts"
// and "dur" in microseconds from the trace's start) per kernel, copy, memset or migration,
// with metadata events naming each process and thread.
//
// One process per traced variant, named after the device and the variant, because each
// variant's timeline is its own launch with its own time origin; one thread per CUDA stream,
// one for unified-memory migrations, which belong to no stream, and one per CPU thread that
// opened NVTX ranges (a traced program's), the ranges nested by time.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report_fwd.hpp"

namespace gpulab::report {

// Thread id of the migrations row: CUDA stream ids are small positive numbers.
inline constexpr std::uint32_t kMigrationThread = 0xFFFFFFFF;
// A traced program's NVTX ranges: one row per CPU thread, its id with this bit set (apart from
// the streams' ids), below the streams and above the migrations.
inline constexpr std::uint32_t kNvtxThreadBit = 0x80000000;

// The trace of every variant that has a timeline; throws UsageError when none has one.
nlohmann::json trace_events(const Report& report);

// The traced reports of a job's ranks (`gpulab profile --trace` as each rank) as one trace, a
// process per rank: on one clock where all ran on one host (Timeline::origin_ns), else each from
// its own first activity, as `otherData.clock` says. Throws UsageError for a report of no rank
// or without a timeline.
nlohmann::json trace_events_of_ranks(const std::vector<Report>& ranks);

}  // namespace gpulab::report
