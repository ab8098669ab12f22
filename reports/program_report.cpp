#include "reports/program_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "reports/kernel_name.hpp"
#include "reports/launch_tally.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/report.hpp"
#include "reports/statistics.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

using ProcessKey = std::pair<std::int64_t, std::uint32_t>;  // pid, correlation id
using ActivityByLaunch = std::map<ProcessKey, const RecordedKernelTime*>;

// The activity record of a launch; nullptr when none arrived.
const RecordedKernelTime* activity_of(const RecordedLaunch& launch,
                                      const ActivityByLaunch& activities) {
  const auto it = activities.find({launch.pid, launch.correlation_id});
  return it == activities.end() ? nullptr : it->second;
}

// A launch's duration in seconds: the counter of a profiled launch (what ncu reports as its
// Duration), else the activity record's interval; nullopt when neither arrived.
std::optional<double> duration_of(const RecordedLaunch& launch,
                                  const ActivityByLaunch& activities) {
  if (launch.profiled) {
    const auto it = launch.metrics.find(metrics::name::duration);
    if (it != launch.metrics.end()) return it->second * 1e-9;
  }
  if (const RecordedKernelTime* a = activity_of(launch, activities))
    return static_cast<double>(a->end_ns - a->start_ns) * 1e-9;
  return std::nullopt;
}

struct Function {
  std::string mangled;
  std::vector<const RecordedLaunch*> launches;
  std::vector<double> durations;
  double total = 0;
  std::int64_t counted = 0;        // launches tallied, not recorded one by one
  std::int64_t counted_timed = 0;  // their durations, in `total`
};

Kernel kernel_of(const RecordedLaunch& launch, const RecordedKernelTime* activity,
                 const std::string& label, int launch_index) {
  Kernel k;
  k.name = label;
  k.function = demangle(launch.mangled_name);
  k.mangled_name = launch.mangled_name;
  k.launch_index = launch_index;
  k.nvtx_path = nvtx_path(launch.nvtx);
  if (launch.attributes) {
    k.attributes = *launch.attributes;
  } else if (activity && activity->registers_per_thread > 0) {
    // The launch callback could not ask the driver; the activity record says what the kernel
    // holds, and the occupancy it allows is worked out once the device is known.
    k.attributes.registers_per_thread = activity->registers_per_thread;
    k.attributes.static_shared_bytes = activity->static_shared_bytes;
    k.attributes.local_bytes_per_thread = activity->local_bytes_per_thread;
  }
  k.attributes.block_threads =
      static_cast<int>(launch.block[0] * launch.block[1] * launch.block[2]);
  k.attributes.grid_blocks = std::uint64_t{launch.grid[0]} * launch.grid[1] * launch.grid[2];
  k.attributes.dynamic_shared_bytes = launch.dynamic_shared_bytes;
  k.metrics = launch.metrics;
  return k;
}

// Display names of functions are short and can collide (overloads, two template instances the
// display form folds together): the second one seen gets " #2", and so on.
std::string unique_label(const std::string& wanted, std::set<std::string>& taken) {
  std::string label = wanted;
  for (int n = 2; !taken.insert(label).second; ++n) label = fmt::format("{} #{}", wanted, n);
  return label;
}

// Why a profiled launch has no counters; empty when it has them.
std::string missing_counters(const RecordedLaunch& l) {
  if (!l.error.empty()) return l.error;
  if (l.metrics.empty())
    return "its counters were not read before the process ended (they are read for a run of "
           "launches at once)";
  return "";
}

Variant function_variant(const Function& f, const ActivityByLaunch& activities,
                         const RecordedSources& sources, const std::string& label,
                         double program_seconds, const std::string& metric_set,
                         const std::string& replay) {
  Variant v;
  v.name = label;
  v.role = Role::function;
  v.description = demangle(f.mangled);
  v.check.status = CheckStatus::skipped;
  v.check.message = "a profiled program's kernel has no reference to check against";
  v.timing = summarize(f.durations, 0, false);
  v.timing.repeat = static_cast<int>(f.durations.size());
  FunctionTotals& t = v.totals.emplace();
  t.launches = static_cast<std::int64_t>(f.launches.size()) + f.counted;
  t.timed_launches = static_cast<std::int64_t>(f.durations.size()) + f.counted_timed;
  t.total_seconds = f.total;
  t.share_of_gpu_time = program_seconds > 0 ? f.total / program_seconds : 0;
  v.counters.metric_set = metric_set;
  v.counters.replay = replay;
  // CUPTI 13.0's kernel replay runs the passes back to back, and batch replay starts each pass by
  // writing the saved memory back: no cache flush in either.
  v.counters.cache_control = "none";
  int index = 0;
  for (const RecordedLaunch* launch : f.launches) {
    const int launch_index = index++;
    if (!launch->profiled) continue;
    ++t.profiled_launches;
    if (const std::string why = missing_counters(*launch); !why.empty()) {
      if (v.counters.note.empty())
        v.counters.note = fmt::format("launch {}: {}", launch_index, why);
      continue;
    }
    v.counters.collected = true;
    v.counters.passes = std::max(v.counters.passes, launch->passes);
    v.kernels.push_back(kernel_of(*launch, activity_of(*launch, activities), label, launch_index));
    const auto source = sources.by_launch.find({launch->pid, launch->index});
    if (source != sources.by_launch.end()) v.kernels.back().source = source->second;
  }
  if (t.profiled_launches == 0 && v.counters.note.empty())
    v.counters.note = "no launch of this function was profiled";
  return v;
}

ProcessInfo process_info(const RecordedProcess& p, const RecordSet& records) {
  ProcessInfo info;
  info.pid = p.pid;
  info.parent_pid = p.parent_pid;
  info.launches = std::count_if(records.launches.begin(), records.launches.end(),
                                [&](const RecordedLaunch& l) { return l.pid == p.pid; });
  for (const auto& [key, tally] : records.tallies)
    if (key.first == p.pid) info.launches += tally.launches;
  info.complete =
      std::find(records.ended.begin(), records.ended.end(), p.pid) != records.ended.end();
  for (const auto& w : records.watchdogs)
    if (w.pid == p.pid)
      info.note = fmt::format(
          "stopped by the watchdog: launch {} of {} ran for more than {:g} s "
          "under replay (a kernel that waits for another cannot be replayed: "
          "try --replay none)",
          w.launch_index, display_name(demangle(w.mangled_name)), w.seconds);
  if (!p.refused.empty()) {
    info.refused = true;
    info.note = p.refused;
  }
  if (info.note.empty() && !info.complete)
    info.note =
        "its records stop before it ended normally (a crash, a signal or _exit): what "
        "follows the last record is missing";
  return info;
}

// What chose the profiled launches, as the command line said it: "--kernel 'x', --nvtx-include
// 'train/'"; empty when every launch was a candidate.
std::string selection(const ProgramInfo& program) {
  std::vector<std::string> options;
  if (!program.kernel_filter.empty())
    options.push_back(fmt::format("--kernel '{}'", program.kernel_filter));
  for (const auto& e : program.nvtx_include)
    options.push_back(fmt::format("--nvtx-include '{}'", e));
  for (const auto& e : program.nvtx_exclude)
    options.push_back(fmt::format("--nvtx-exclude '{}'", e));
  if (program.capture_range != "none")
    options.push_back("--capture-range " + program.capture_range);
  return fmt::format("{}", fmt::join(options, ", "));
}

// The GPU time of the launches inside each NVTX range path and its parents: a launch inside
// train/step counts for train and for train/step.
std::vector<RangeTime> range_times(const std::vector<const RecordedLaunch*>& launches,
                                   const ActivityByLaunch& activities) {
  std::map<std::vector<std::string>, RangeTime> by_path;  // in path order: a parent first
  for (const RecordedLaunch* l : launches) {
    const auto seconds = duration_of(*l, activities);
    for (std::size_t depth = 1; depth <= l->nvtx.size(); ++depth) {
      const std::vector<std::string> prefix(l->nvtx.begin(), l->nvtx.begin() + depth);
      RangeTime& r = by_path[prefix];
      if (r.path.empty()) r.path = nvtx_path(prefix);
      ++r.launches;
      r.seconds += seconds.value_or(0);
    }
  }
  std::vector<RangeTime> out;
  for (auto& [path, r] : by_path) out.push_back(std::move(r));
  return out;
}

// With --source: the profiled functions whose launches came back without per-instruction data.
void note_missing_sources(ProgramInfo& program, const std::vector<Variant>& variants) {
  std::vector<std::string> missing;
  int profiled = 0;
  for (const auto& v : variants) {
    if (v.kernels.empty()) continue;
    ++profiled;
    if (std::none_of(v.kernels.begin(), v.kernels.end(),
                     [](const Kernel& k) { return k.source.has_value(); }))
      missing.push_back(v.name);
  }
  if (missing.empty()) return;
  constexpr std::size_t kNamed = 5;
  std::string names;
  for (std::size_t i = 0; i < missing.size() && i < kNamed; ++i)
    names += (i ? ", " : "") + missing[i];
  if (missing.size() > kNamed) names += fmt::format(" and {} more", missing.size() - kNamed);
  program.left_out.push_back(
      fmt::format("per-instruction data (--source) was not recorded for {} of the {} profiled "
                  "functions: {}",
                  missing.size(), profiled, names));
}

void note_left_out(ProgramInfo& program, const RecordSet& records, std::int64_t untimed) {
  std::int64_t unmatched = 0, unprofiled = 0, counted = 0;
  std::set<std::string> unmatched_functions;
  for (const auto& l : records.launches) {
    if (!l.matched) {
      ++unmatched;
      unmatched_functions.insert(l.mangled_name);
    } else if (!l.profiled) {
      ++unprofiled;
    }
  }
  for (const auto& [key, tally] : records.tallies) {
    counted += tally.launches;
    unprofiled += tally.launches - tally.unmatched;
    unmatched += tally.unmatched;
    if (tally.unmatched > 0) unmatched_functions.insert(tally.mangled_name);
  }
  // The skipped launches are the first matching ones; every later unprofiled one is past the
  // count.
  const std::int64_t skipped = std::min(program.launch_skip, unprofiled);
  const std::int64_t past_count = unprofiled - skipped;
  auto& out = program.left_out;
  if (unmatched > 0) {
    const std::string chosen_by = selection(program);
    out.push_back(fmt::format(
        "{} launches of {} functions were not selected{}: timed, not "
        "profiled",
        unmatched, unmatched_functions.size(), chosen_by.empty() ? "" : " by " + chosen_by));
  }
  if (skipped > 0)
    out.push_back(
        fmt::format("the first {} matching launches were skipped (--launch-skip): "
                    "timed, not profiled",
                    skipped));
  if (past_count > 0 && program.replay == "none")
    out.push_back(
        fmt::format("{} matching launches were timed, not profiled (--replay none)", past_count));
  else if (past_count > 0)
    out.push_back(
        fmt::format("{} matching launches after the first {} profiled were timed, not "
                    "profiled (--launch-count)",
                    past_count, program.launch_count));
  if (counted > 0)
    out.push_back(
        fmt::format("{} launches past each function's first {} were counted, not recorded one by "
                    "one: their durations are in the functions' totals, not in their timing "
                    "statistics",
                    counted, kFullRecordsPerFunction));
  if (untimed > 0)
    out.push_back(
        fmt::format("{} launches have no duration: their activity records were not "
                    "delivered before the process ended",
                    untimed));
  if (records.orphan_counters > 0)
    out.push_back(fmt::format("{} counter records name no launch recorded before them",
                              records.orphan_counters));
  for (const auto& entry : records.not_read)
    out.push_back("the record folder's " + entry + ": not read");
  if (records.unreadable_lines > 0)
    out.push_back(
        fmt::format("{} record lines could not be read (cut short when a process was "
                    "killed)",
                    records.unreadable_lines));
}

// The NVTX ranges of a traced program on the activities' time axis (seconds from the first
// activity), sorted by start: a range that began before the first activity is cut to start
// there, one that ended before it is left out.
std::vector<RangeSpan> assemble_ranges(const std::vector<RecordedRange>& ranges,
                                       const std::vector<TraceRecord>& activities) {
  std::vector<RangeSpan> out;
  if (activities.empty()) return out;
  std::uint64_t origin = activities.front().start;
  for (const auto& a : activities) origin = std::min(origin, a.start);
  for (const auto& r : ranges) {
    if (r.end_ns < origin) continue;
    const std::uint64_t start = std::max(r.start_ns, origin);
    out.push_back({nvtx_path(r.path), r.thread, static_cast<double>(start - origin) * 1e-9,
                   static_cast<double>(r.end_ns - origin) * 1e-9});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RangeSpan& a, const RangeSpan& b) { return a.start < b.start; });
  return out;
}

// Trace mode: the program's whole timeline, as one variant that holds only the timeline.
std::optional<Variant> timeline_variant(const RecordSet& records) {
  if (records.activities.empty()) return std::nullopt;
  Variant v;
  v.name = "timeline";
  v.role = Role::function;
  v.description = "every kernel, copy, memset and unified-memory migration of the program";
  v.check.status = CheckStatus::skipped;
  v.check.message = "a profiled program has no reference to check against";
  v.counters.metric_set = "none";
  Timeline& t = v.timeline.emplace();
  t.kernel_records = "concurrent";
  t.activities = assemble_activities(records.activities, 0);
  for (const auto& a : records.activities)  // assemble_activities counts from the earliest
    t.origin_ns = t.origin_ns ? std::min(t.origin_ns, a.start) : a.start;
  t.ranges = assemble_ranges(records.ranges, records.activities);
  t.unified_memory.available = true;
  TraceCounts counts;
  for (const auto& [pid, c] : records.trace_counts) counts += c;
  add_trace_counts(t, counts);
  t.summary = summarize(t);
  v.timing = summarize({t.summary.span_seconds}, 0, false);
  return v;
}

}  // namespace

Report program_report(ProgramInfo program, const RecordSet& records,
                      const std::string& metric_set) {
  Report report;
  ActivityByLaunch activities;
  for (const auto& k : records.kernel_times)
    if (k.end_ns >= k.start_ns) activities[{k.pid, k.correlation_id}] = &k;

  // Launches in process order (the order the records name them), then launch order.
  std::vector<const RecordedLaunch*> launches;
  for (const auto& l : records.launches) launches.push_back(&l);
  std::stable_sort(launches.begin(), launches.end(), [](const auto* a, const auto* b) {
    return a->pid != b->pid ? a->pid < b->pid : a->index < b->index;
  });

  std::vector<Function> functions;
  std::map<std::string, std::size_t> by_name;
  std::int64_t untimed = 0;
  for (const RecordedLaunch* l : launches) {
    auto [it, added] = by_name.try_emplace(l->mangled_name, functions.size());
    if (added) functions.push_back({l->mangled_name, {}, {}, 0});
    Function& f = functions[it->second];
    f.launches.push_back(l);
    if (const auto seconds = duration_of(*l, activities)) {
      f.durations.push_back(*seconds);
      f.total += *seconds;
    } else {
      ++untimed;
    }
    program.profiled_launches += l->profiled && missing_counters(*l).empty() ? 1 : 0;
  }
  program.launches = static_cast<std::int64_t>(launches.size());
  for (const auto& [key, tally] : records.tallies) {
    auto [it, added] = by_name.try_emplace(tally.mangled_name, functions.size());
    if (added) functions.push_back({tally.mangled_name, {}, {}, 0});
    Function& f = functions[it->second];
    f.counted += tally.launches;
    f.counted_timed += tally.timed_launches;
    f.total += tally.total_seconds;
    untimed += std::max<std::int64_t>(tally.launches - tally.timed_launches, 0);
    program.launches += tally.launches;
  }
  for (const auto& f : functions) program.kernel_seconds += f.total;

  // Heaviest first: where the program's kernel time goes is the first thing to read.
  std::stable_sort(functions.begin(), functions.end(),
                   [](const Function& a, const Function& b) { return a.total > b.total; });
  if (auto timeline = timeline_variant(records)) report.variants.push_back(std::move(*timeline));
  std::set<std::string> labels;
  for (const auto& f : functions) {
    const std::string label = unique_label(display_name(demangle(f.mangled)), labels);
    report.variants.push_back(function_variant(f, activities, records.sources, label,
                                               program.kernel_seconds, metric_set,
                                               program.replay.empty() ? "kernel" : program.replay));
  }

  for (const auto& p : records.processes) {
    program.processes.push_back(process_info(p, records));
    if (report.device.chip.empty()) report.device.chip = p.chip;
    if (report.device.cupti_version == 0) report.device.cupti_version = p.cupti_version;
  }
  note_left_out(program, records, untimed);
  if (program.source) note_missing_sources(program, report.variants);
  program.ranges = range_times(launches, activities);
  report.program = std::move(program);
  return report;
}

}  // namespace gpulab::report
