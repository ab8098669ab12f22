// The activity timelines of a report as Chrome trace-event JSON, the format Perfetto and
// chrome://tracing open (and PyTorch's profiler writes): one complete event ("ph": "X", "ts"
// and "dur" in microseconds from the trace's start) per kernel, copy, memset or migration,
// with metadata events naming each process and thread.
//
// One process per traced variant, named after the device and the variant, because each
// variant's timeline is its own launch with its own time origin; one thread per CUDA stream,
// and one for unified-memory migrations, which belong to no stream.
#pragma once

#include <nlohmann/json.hpp>

#include "reports/report_fwd.hpp"

namespace gpulab::report {

// Thread id of the migrations row: CUDA stream ids are small positive numbers.
inline constexpr std::uint32_t kMigrationThread = 0xFFFFFFFF;

// The trace of every variant that has a timeline; throws UsageError when none has one.
nlohmann::json trace_events(const Report& report);

}  // namespace gpulab::report
