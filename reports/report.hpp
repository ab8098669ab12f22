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

#include "reports/device_info.hpp"
#include "reports/diagnosis_model.hpp"
#include "reports/measures.hpp"
#include "reports/source_model.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {

inline constexpr const char* kSchema = "gpulab.report/4";
// Reports of schema 1 (no profiled programs yet), 2 (no kernel sources yet) and 3 (a program's
// launches one object each, not columns) are read as they are.
inline constexpr const char* kSchemaV1 = "gpulab.report/1";
inline constexpr const char* kSchemaV2 = "gpulab.report/2";
inline constexpr const char* kSchemaV3 = "gpulab.report/3";

struct ToolInfo {
  std::string name = "gpulab";
  std::string version;
  std::string git_sha;
};

struct Kernel {
  std::string name;           // the lab's label for the launch (e.g. "tiled"), or the function's
                              // display name (reports/kernel_name.hpp) when the lab gave none
  std::string function;       // demangled signature, as ncu and nsys print it; empty if unknown
  std::string mangled_name;   // as the toolchain and `ncu --print-kernel-base mangled` write it
  int launch_index = 0;  // order within the variant
  // A profiled program's launch: the NVTX ranges open around it, outermost first, as one path
  // (reports/nvtx_filter.hpp: "train/step/forward"); empty when none was.
  std::string nvtx_path;
  StaticAttributes attributes;
  std::map<std::string, double> metrics;  // raw CUPTI metric name -> value
  std::map<std::string, double> derived;  // see reports/derived.hpp
  std::optional<Diagnosis> diagnosis;     // present after diagnose_report
  std::optional<KernelSource> source;     // its instructions by source line, when collected
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

// The kernels launched inside one NVTX range of a profiled program, as nsys's NVTX GPU
// projection counts them: the launches recorded one by one whose range path starts with `path`.
struct RangeTime {
  std::string path;  // reports/nvtx_filter.hpp: "train/step"
  std::int64_t launches = 0;
  double seconds = 0;  // the GPU time of those launches
};

// Which rank of a job gpulab profiled, from the variables its launcher sets (app/job_rank.hpp).
struct RankInfo {
  std::string launcher;   // whose variables said so: "torchrun", "Open MPI", "MPICH", "Slurm"
  std::int64_t rank = 0;  // in the job
  std::optional<std::int64_t> local_rank;  // on its host
  std::optional<std::int64_t> world_size;  // the job's ranks
  std::string host;
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
  std::vector<std::string> nvtx_include;  // --nvtx-include expressions (reports/nvtx_filter.hpp)
  std::vector<std::string> nvtx_exclude;
  std::string capture_range = "none";  // or "cudaProfilerApi"
  std::int64_t launch_skip = 0;   // matching launches left unprofiled before the first profiled
  std::int64_t launch_count = 0;  // most launches profiled; 0: no limit
  bool source = false;            // --source: per-instruction data of profiled functions asked
  std::int64_t launches = 0;      // kernel launches in every process
  std::int64_t profiled_launches = 0;
  double kernel_seconds = 0;  // sum of every timed launch's duration
  std::vector<ProcessInfo> processes;
  std::vector<std::string> left_out;  // what was not measured, and why
  std::vector<RangeTime> ranges;      // every range with launches inside, a parent before its own
  std::optional<RankInfo> rank;       // when gpulab ran as a rank of a job
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

// Part of a lab run's wall time: "device" (the device's properties and roofs, measured once per
// process, and CUPTI's loading), "setup" (the lab's inputs), "checks" (each variant's checked
// launch and its comparison with the CPU reference, computed at the first), "timing", "trace",
// "counters" (every replay pass), "source".
struct PhaseTime {
  std::string phase;
  double seconds = 0;
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
  std::vector<PhaseTime> phases;  // a lab run's: where its wall time went, in order

  const Variant* find_variant(const std::string& name) const;
  const Variant* baseline() const;
  // The baseline `v` is measured against: the nearest baseline at or before it (a lab with
  // two experiments, such as the spill lab's local array and then its register cap, lists
  // each baseline before its own variants); nullptr when none precedes it. Speedups and the
  // selftest's judgement (reports/diagnosis/expectations.hpp) both use it.
  const Variant* baseline_of(const Variant& v) const;
  // The work model that applies to a variant: its own, else the lab's.
  const WorkModel& work_of(const Variant& v) const { return v.work ? *v.work : work; }
  // What the report measured, as headings and comparisons name it: the lab, or the program
  // (its executable's file name).
  std::string subject() const;
};

const char* to_string(VariantStatus status);
std::optional<VariantStatus> variant_status_from_string(const std::string& s);

}  // namespace gpulab::report
