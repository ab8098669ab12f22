// The report model: plain data, SI units (bytes, seconds, FLOP, Hz), no CUDA types.
//
// A report is what one `gpulab run` measured of a lab, or what `gpulab profile` measured of a
// program. app/ fills it, reports/ derives metrics from it, renders it and (de)serializes it;
// docs/report-schema.md documents the JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::report {

inline constexpr const char* kSchema = "gpulab.report/2";
// Reports of schema 1 (no profiled programs yet) are read as they are.
inline constexpr const char* kSchemaV1 = "gpulab.report/1";

struct ToolInfo {
  std::string name = "gpulab";
  std::string version;
  std::string git_sha;
};

struct Roofs {
  double theoretical_bandwidth = 0;  // B/s: memory clock x bus width x 2 (DDR)
  double copy_bandwidth = 0;         // B/s: measured device-to-device copy, read + written bytes
  std::uint64_t copy_bytes = 0;      // size of one buffer of that measurement
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string chip;  // CUPTI chip name, e.g. GH100; empty when counters are unavailable
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t global_memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  std::uint64_t shared_per_sm_bytes = 0;
  int max_warps_per_sm = 0;
  int registers_per_sm = 0;    // 0: not recorded (reports before these two were kept)
  int max_blocks_per_sm = 0;   // resident blocks an SM holds at most, whatever their size
  double sm_clock_hz = 0;      // peak
  double memory_clock_hz = 0;  // peak
  int memory_bus_bits = 0;
  int driver_version = 0;   // CUDA version the driver supports, e.g. 13000
  int runtime_version = 0;  // CUDA runtime gpulab was built with
  int cupti_version = 0;    // CUPTI API version
  Roofs roofs;
  bool counters_available = false;
  std::string counters_unavailable_reason;
};

// A lab's variants are baselines, optimized versions and library references; a profiled
// program's variants are its kernel functions.
enum class Role { baseline, optimized, reference, function };

struct WorkModel {
  double bytes_read = 0;     // fewest DRAM bytes the computation must read
  double bytes_written = 0;  // fewest DRAM bytes it must write
  double flops = 0;
  // A collective across GPUs (the nccl lab): the bytes each GPU contributes to it, as nccl-tests
  // count them (the message size), and how many GPUs take part. 0 when there is none.
  double collective_bytes = 0;
  int ranks = 0;
  double bytes() const { return bytes_read + bytes_written; }
};

enum class CheckStatus { passed, failed, skipped };

struct Check {
  CheckStatus status = CheckStatus::skipped;
  double max_abs_error = 0;
  double max_rel_error = 0;   // relative to max |reference|
  double tolerance_abs = 0;   // an element passes when |got-ref| <= abs + rel * |ref|
  double tolerance_rel = 0;
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;  // elements outside tolerance, NaN included
  std::string message;           // why it failed or was skipped; first mismatch
};

struct TimingStats {
  int warmup = 0;
  int repeat = 0;
  bool cold_l2 = false;       // L2 flushed before every timed repetition
  std::vector<double> samples;  // seconds, in measurement order
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
};

struct StaticAttributes {
  int registers_per_thread = 0;
  std::uint64_t local_bytes_per_thread = 0;
  std::uint64_t static_shared_bytes = 0;
  std::uint64_t dynamic_shared_bytes = 0;
  int block_threads = 0;
  std::uint64_t grid_blocks = 0;
  int max_active_blocks_per_sm = 0;
  double theoretical_occupancy = 0;  // fraction of the SM's warp slots
  // What ptxas reported when it compiled the kernel (`-Xptxas -v`, captured at build time);
  // absent for kernels the build has no record of (libraries' kernels).
  std::optional<int> spill_store_bytes;
  std::optional<int> spill_load_bytes;
  std::optional<int> stack_frame_bytes;
};

// One measured value the diagnosis relied on, and the threshold it was held against.
struct Evidence {
  std::string metric;            // raw, derived or attribute name
  std::optional<double> value;   // nullopt: not measured
  std::string relation;          // ">=", "<", ... (empty when no threshold applies)
  std::string threshold;         // threshold name (docs/diagnosis.md)
  double threshold_value = 0;
};

// One node of the decision tree as the walk met it.
struct PathStep {
  std::string node;        // stable node id, e.g. "bottleneck", "shared-banks"
  int depth = 0;           // 0 for the root
  std::string question;
  std::string expression;  // the metric expression evaluated
  std::vector<Evidence> evidence;
  std::string answer;   // "yes", "no", "not measured", or the branch taken ("memory", ...)
  std::string finding;  // the finding id a "yes" produced, if any
};

struct Finding {
  std::string id;
  std::string title;
  std::string severity;  // "high", "medium", "low"
  double score = 0;      // ranking key in [0, 1]
  std::vector<Evidence> evidence;
  std::string explanation;
  std::string recommendation;
  std::string detail;    // what this kernel's evidence adds (the occupancy limiter); may be empty
  std::string false_if;  // the evidence that would make the finding false
  std::vector<std::string> labs;
};

struct Diagnosis {
  std::string verdict;  // memory-bound, compute-bound, latency-bound, launch-bound
  std::vector<PathStep> path;
  std::vector<Finding> findings;  // ranked: the principal finding first
  std::map<std::string, double> thresholds_overridden;
};

struct Kernel {
  std::string name;           // the lab's label for the launch (e.g. "tiled"), or the function's
                              // display name (reports/kernel_name.hpp) when the lab gave none
  std::string function;       // demangled signature, as ncu and nsys print it; empty if unknown
  std::string mangled_name;   // as the toolchain and `ncu --print-kernel-base mangled` write it
  int launch_index = 0;  // order within the variant
  StaticAttributes attributes;
  std::map<std::string, double> metrics;  // raw CUPTI metric name -> value
  std::map<std::string, double> derived;  // see reports/derived.hpp
  std::optional<Diagnosis> diagnosis;     // present after diagnose_report
};

// How the counters of a variant were collected (or why not).
struct Counters {
  bool collected = false;
  std::string metric_set;  // "basic", "stalls", "full", "custom" (a list); "" when not collected
  int passes = 0;
  std::string replay;         // "variant": gpulab replays the variant once per pass (auto
                              // range, user replay); "kernel": CUPTI kernel replay;
                              // "batch": a profiled program's launches replayed together
  std::string cache_control;  // what was done to caches before profiling
  std::string note;           // why counters are missing, when they are
  double collection_seconds = 0;  // wall time of the profiling batch this variant was part of
};

// ---- the activity trace of one launch of a variant (traced labs) -------------------------------

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
  std::uint64_t bytes = 0;   // copies, memsets, migrations
  std::string source_memory;       // copies: "pageable", "pinned", "device", "managed", "array",
  std::string destination_memory;  // "unknown"; empty for kernels
  std::string cause;         // migrations: "on-demand" (caused by a GPU page fault, including
                             // the driver's prefetch around it), "prefetch" (asked for),
                             // "eviction", "other"
  std::uint32_t records = 1; // migration records merged into this interval
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
  double span_seconds = 0;      // first start to last end
  double kernel_seconds = 0;    // union of kernel intervals
  double transfer_seconds = 0;  // union of copy, memset and requested-migration intervals
  double on_demand_seconds = 0; // union of on-demand migration intervals
  double busy_seconds = 0;      // union of everything
  double overlap_fraction = 0;  // |kernels ∩ transfers| / span
  double idle_fraction = 0;     // 1 - busy / span
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

struct Timeline {
  std::vector<Activity> activities;  // sorted by start
  UnifiedMemoryCounts unified_memory;
  std::string kernel_records;  // "concurrent" (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
  double trace_seconds = 0;    // wall time of the traced launch, tracing included
  TimelineSummary summary;     // derived
  std::optional<Diagnosis> diagnosis;  // the timeline's part of the diagnosis
};

enum class VariantStatus { ok, failed, skipped };

// A kernel function of a profiled program, over all its launches (Variant::kernels holds only
// the launches whose counters were collected).
struct FunctionTotals {
  std::int64_t launches = 0;
  std::int64_t timed_launches = 0;     // launches with a known duration
  std::int64_t profiled_launches = 0;  // launches with counters
  double total_seconds = 0;            // sum of the known durations
  double share_of_gpu_time = 0;        // total_seconds / the program's kernel time
};

// One process of a profiled program (the program itself, and each child that used CUDA).
struct ProcessInfo {
  std::int64_t pid = 0;
  std::int64_t parent_pid = 0;
  std::int64_t launches = 0;
  bool complete = false;  // its records end as the process ended normally (exit, return)
  bool refused = false;   // CUPTI could not be used in it: nothing was measured
  std::string note;       // why its records stop early, or why nothing was measured in it
};

// What `gpulab profile` ran and how it went.
struct ProgramInfo {
  std::vector<std::string> argv;  // the program and its arguments, as executed
  std::optional<int> exit_code;   // when it exited
  std::string signal;             // when a signal ended it ("SIGSEGV")
  std::string ended;              // one line: "exited with status 0", "killed by SIGSEGV", ...
  double wall_seconds = 0;        // from start to end, profiling included
  std::string replay;             // "kernel" (CUPTI kernel replay), "batch" or "none"
  std::string kernel_filter;      // the --kernel regular expression; empty: every kernel
  std::int64_t launch_skip = 0;   // matching launches left unprofiled before the first profiled
  std::int64_t launch_count = 0;  // most launches profiled; 0: no limit
  std::int64_t launches = 0;      // kernel launches in every process
  std::int64_t profiled_launches = 0;
  double kernel_seconds = 0;  // sum of every timed launch's duration
  std::vector<ProcessInfo> processes;
  std::vector<std::string> left_out;  // what was not measured, and why
};

struct Variant {
  std::string name;
  Role role = Role::optimized;
  std::string description;
  VariantStatus status = VariantStatus::ok;
  std::string skip_reason;
  Check check;
  TimingStats timing;
  std::optional<WorkModel> work;   // this variant's own work model, when it differs from the lab's
  double effective_bandwidth = 0;  // B/s: model bytes / median time
  double roof_fraction = 0;        // effective bandwidth / measured copy roof
  double speedup = 0;              // baseline median / this median (0 if no baseline)
  Counters counters;
  std::vector<Kernel> kernels;
  std::optional<Timeline> timeline;  // traced labs: one launch, recorded by the activity tracer
  std::optional<FunctionTotals> totals;  // a profiled program's function: all of its launches
};

struct LabInfo {
  std::string name;
  std::string topic;
  std::string summary;
};

struct Report {
  std::string schema = kSchema;
  ToolInfo tool;
  std::vector<std::string> argv;
  std::string created_utc;  // ISO 8601
  DeviceInfo device;
  LabInfo lab;                         // empty for a profiled program
  std::optional<ProgramInfo> program;  // present for a profiled program
  std::map<std::string, std::int64_t> params;
  WorkModel work;
  std::vector<Variant> variants;
  std::vector<std::string> warnings;

  const Variant* find_variant(const std::string& name) const;
  const Variant* baseline() const;
  // The baseline `v` is measured against: the nearest baseline at or before it (a lab with
  // two experiments, such as the spill lab's local array and then its register cap, lists
  // each baseline before its own variants); nullptr when none precedes it. Speedups and the
  // selftest's judgement (reports/expectations.hpp) both use it.
  const Variant* baseline_of(const Variant& v) const;
  // The work model that applies to a variant: its own, else the lab's.
  const WorkModel& work_of(const Variant& v) const { return v.work ? *v.work : work; }
  // What the report measured, as headings and comparisons name it: the lab, or the program
  // (its executable's file name).
  std::string subject() const;
};

const char* to_string(Role role);
const char* to_string(CheckStatus status);
const char* to_string(VariantStatus status);
const char* to_string(ActivityKind kind);
std::optional<ActivityKind> activity_kind_from_string(const std::string& s);
std::optional<Role> role_from_string(const std::string& s);
std::optional<CheckStatus> check_status_from_string(const std::string& s);
std::optional<VariantStatus> variant_status_from_string(const std::string& s);

}  // namespace gpulab::report
