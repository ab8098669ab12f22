// What the injection library of `gpulab profile` records inside a profiled program, and how the
// parent reads it back: one JSON object per line, appended to one file per process as each
// record is complete, so that a program that exits, crashes or is killed leaves every record
// written before. The parent reads the lines of every process's file; a last line cut short by a
// kill is counted, not fatal. Plain data and text: the writer (inject/) and the reader (app/)
// share this file, and CPU tests reach both sides.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/measures.hpp"
#include "reports/record_line.hpp"
#include "reports/source_records.hpp"
#include "reports/trace_assembly.hpp"

namespace gpulab::report {

// The first record of every process's file.
struct RecordedProcess {
  std::int64_t pid = 0;
  std::int64_t parent_pid = 0;
  std::string mode;  // "counters" or "trace"
  int cupti_version = 0;
  std::string chip;  // of the device of the first profiled launch; empty before one
  // Why the injection measures nothing in this process (another CUPTI client holds the
  // callbacks, counters are not permitted, ...); empty when it works.
  std::string refused;
};

// One kernel launch, as the launch callback saw it; written when the launch returns.
struct RecordedLaunch {
  std::int64_t pid = 0;
  std::int64_t index = 0;            // every launch of the process, from 0, in launch order
  std::uint32_t correlation_id = 0;  // CUPTI's, to join the activity record's duration
  std::string mangled_name;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t dynamic_shared_bytes = 0;
  std::optional<StaticAttributes> attributes;  // when the driver could be asked
  // The NVTX ranges open around it, outermost first (inject/nvtx_ranges.hpp); empty when none.
  std::vector<std::string> nvtx;
  bool matched = false;   // passed --kernel, the NVTX filter and the capture range
  bool profiled = false;  // counters collected (or tried: see `error`)
  int passes = 0;
  std::map<std::string, double> metrics;
  std::string error;  // why counters of a profiled launch are missing
};

// The counters of a profiled launch, written once its batch is read: kernel replay profiles a
// run of consecutive launches in one session (inject/kernel_replay.cpp), so a launch's record comes
// first, when it returns, and its counters later. The reader fills them into that launch.
struct RecordedCounters {
  std::int64_t pid = 0;
  std::int64_t launch_index = 0;
  int passes = 0;
  std::map<std::string, double> metrics;
  std::string error;  // why there are none
};

// A kernel's execution interval from the activity API, joined to its launch by correlation id.
struct RecordedKernelTime {
  std::int64_t pid = 0;
  std::uint32_t correlation_id = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t stream = 0;
  // What the activity record says the kernel holds (0: not said): the attributes of launches
  // whose callback could not ask the driver.
  int registers_per_thread = 0;
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t local_bytes_per_thread = 0;
};

// An NVTX range that closed in a traced program (--trace), on CUPTI's clock (cuptiGetTimestamp,
// the activity records' own): written when it closes, so ranges still open at the end are not.
struct RecordedRange {
  std::int64_t pid = 0;
  std::uint32_t thread = 0;
  std::vector<std::string> path;  // its parents and itself, outermost first
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// The watchdog ended the process: a profiled launch ran for longer than the limit (a kernel that
// waits on another, which replay serializes, never finishes).
struct RecordedWatchdog {
  std::int64_t pid = 0;
  std::int64_t launch_index = 0;
  std::string mangled_name;
  double seconds = 0;
};

// What a process's launches that were not recorded one by one add up to, per function
// (reports/launch_tally.hpp): cumulative, so the latest line of a (pid, function) holds it all.
struct RecordedTally {
  std::int64_t pid = 0;
  std::string mangled_name;
  bool matched = false;             // the function passes --kernel
  std::int64_t launches = 0;        // launches counted, not recorded
  std::int64_t timed_launches = 0;  // durations folded into total_seconds, joined by name
  double total_seconds = 0;
  // Of `launches`, those that did not pass --kernel, the NVTX filter or the capture range.
  std::int64_t unmatched = 0;
};

// Everything the files of one profiled run held.
struct RecordSet {
  std::vector<RecordedProcess> processes;
  std::vector<RecordedLaunch> launches;
  std::vector<RecordedKernelTime> kernel_times;
  std::vector<RecordedWatchdog> watchdogs;
  // By (pid, function): the latest tally of the launches each process counted without a record.
  std::map<std::pair<std::int64_t, std::string>, RecordedTally> tallies;
  std::vector<std::int64_t> ended;      // pids whose records end with the process's normal end
  std::vector<TraceRecord> activities;  // trace mode
  std::vector<RecordedRange> ranges;    // trace mode
  std::map<std::int64_t, TraceCounts> trace_counts;  // trace mode, per pid
  RecordedSources sources;                           // --source: per-instruction data
  std::int64_t unreadable_lines = 0;  // lines cut short by a kill, or not records at all
  std::int64_t orphan_counters = 0;   // counters records naming no launch read before them
  // Entries of the record folder left unread, each with why (not a plain file; past the size
  // bound from there on).
  std::vector<std::string> not_read;
  // Where each (pid, launch index) is in `launches`: a counters record finds its launch at once.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> launch_positions;
};

std::string to_line(const RecordedProcess& r);
std::string to_line(const RecordedLaunch& r);
std::string to_line(const RecordedKernelTime& r);
std::string to_line(const RecordedWatchdog& r);
std::string to_line(const RecordedCounters& r);
std::string to_line(const RecordedTally& r);
std::string to_line(const RecordedRange& r);
std::string end_line(std::int64_t pid);
std::string to_line(std::int64_t pid, const TraceRecord& r);
std::string to_line(std::int64_t pid, const TraceCounts& counts);

// Adds the records of one file to `into`; never throws on content (a bad line is counted).
void read_records(std::istream& in, RecordSet& into);

// Reads record lines one by one, each into the storage of the line before.
class RecordReader {
 public:
  // Adds one line's record (without its newline); a line that is not a record is counted.
  void read(std::string_view line, RecordSet& into);

 private:
  RecordLine line_;
};

// The most gpulab reads of one process's record file: far above what the injection writes (a
// launch is recorded one by one only when it is profiled or among its function's first
// kFullRecordsPerFunction, reports/launch_tally.hpp; docs/profile.md gives the bound), low
// enough that a runaway file cannot take the machine's memory. Past it, the rest is not read and
// the report says so.
inline constexpr std::size_t kMaxRecordFileBytes = std::size_t{256} << 20;

// What the injection records: counters of the profiled launches, or the whole timeline.
enum class InjectionMode { counters, trace };
// How a profiled program's launches are replayed for their counters (docs/profile.md).
enum class ReplayMode { kernel, batch, none };

// As the command line, the JSON and the reports spell them.
const char* to_string(InjectionMode mode);
const char* to_string(ReplayMode mode);
std::optional<InjectionMode> injection_mode_from_string(const std::string& text);
std::optional<ReplayMode> replay_mode_from_string(const std::string& text);

// The parent's options, passed to the injection library in the environment as one JSON object.
struct InjectionConfig {
  InjectionMode mode = InjectionMode::counters;
  std::string kernel_filter;  // ECMAScript regular expression searched in the demangled name
  // NVTX expressions (reports/nvtx_filter.hpp), and whether only launches between
  // cudaProfilerStart and cudaProfilerStop are candidates.
  std::vector<std::string> nvtx_include;
  std::vector<std::string> nvtx_exclude;
  bool profiler_api_range = false;
  std::int64_t launch_skip = 0;
  std::int64_t launch_count = 0;  // 0: no limit
  ReplayMode replay = ReplayMode::kernel;
  std::vector<std::string> metrics;
  double watchdog_seconds = 0;  // 0: none
  // Per-instruction counters and warp-stall samples of each profiled function's first profiled
  // launch (reports/source_records.hpp), by replaying it from its saved memory (batch replay).
  bool source = false;
  std::string output_dir;       // where each process writes <pid>.jsonl
};

inline constexpr const char* kInjectionConfigVariable = "GPULAB_PROFILE_CONFIG";

std::string to_json_text(const InjectionConfig& config);
// Throws UsageError naming the field at fault.
InjectionConfig injection_config_from_json(const std::string& text);

}  // namespace gpulab::report
