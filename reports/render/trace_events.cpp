#include "reports/render/trace_events.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/rank_view.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

using json = nlohmann::json;

constexpr double kMicroseconds = 1e6;

const char* category(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kernel:
      return "kernel";
    case ActivityKind::copy:
      return "copy";
    case ActivityKind::memset:
      return "memset";
    case ActivityKind::migration:
      return "migration";
  }
  return "other";
}

// Perfetto's thread id of a row: the stream id, on a timeline of several GPUs offset by its GPU
// (stream ids are per GPU).
constexpr std::uint32_t kDeviceStride = 1u << 20;

std::uint32_t thread_of(const TimelineRow& row, bool name_devices) {
  if (row.migrations) return kMigrationThread;
  return name_devices ? row.device * kDeviceStride + row.stream : row.stream;
}

json args_of(const Activity& a) {
  json args = json::object();
  if (a.kind != ActivityKind::migration) args["stream"] = a.stream;
  if (a.device != 0) args["device"] = a.device;
  if (a.kind != ActivityKind::kernel) args["bytes"] = a.bytes;
  if (!a.source_memory.empty()) args["source_memory"] = a.source_memory;
  if (!a.destination_memory.empty()) args["destination_memory"] = a.destination_memory;
  if (!a.cause.empty()) args["cause"] = a.cause;
  if (a.records != 1) args["records"] = a.records;
  return args;
}

// Names a copy by its direction and memory kinds ("HtoD pinned→device"), so that the rows of a
// stream read without opening each event.
std::string event_name(const Activity& a) {
  if (a.kind == ActivityKind::copy && !a.source_memory.empty())
    return fmt::format("{} {}→{}", a.name, a.source_memory, a.destination_memory);
  if (a.kind == ActivityKind::migration && !a.cause.empty())
    return fmt::format("{} {}", a.name, a.cause);
  return a.name;
}

json metadata(const char* what, int pid, std::optional<std::uint32_t> tid, json args) {
  json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", std::move(args)}};
  if (tid) m["tid"] = *tid;
  return m;
}

// One process's events: the timeline's activities, a thread per stream, and its NVTX ranges,
// `shift` seconds later than the timeline says (the ranks of a job, on one clock).
void add_process(json& events, int pid, const std::string& process, const Timeline& timeline,
                 double shift) {
  events.push_back(metadata("process_name", pid, std::nullopt, {{"name", process}}));
  events.push_back(metadata("process_sort_index", pid, std::nullopt, {{"sort_index", pid}}));
  const bool name_devices = names_devices(timeline.activities);
  std::map<std::uint32_t, TimelineRow> threads;
  for (const auto& a : timeline.activities) {
    const TimelineRow row = row_of(a);
    threads.emplace(thread_of(row, name_devices), row);
    events.push_back({{"ph", "X"},
                      {"cat", category(a.kind)},
                      {"name", event_name(a)},
                      {"pid", pid},
                      {"tid", thread_of(row, name_devices)},
                      {"ts", (a.start + shift) * kMicroseconds},
                      {"dur", (a.end - a.start) * kMicroseconds},
                      {"args", args_of(a)}});
  }
  for (const auto& [tid, row] : threads) {
    events.push_back(metadata("thread_name", pid, tid, {{"name", row_label(row, name_devices)}}));
    // Streams in id order, migrations last.
    events.push_back(metadata("thread_sort_index", pid, tid,
                              {{"sort_index", tid == kMigrationThread ? 1 << 30 : int(tid)}}));
  }
  std::set<std::uint32_t> range_threads;
  for (const auto& s : timeline.ranges) {
    const std::uint32_t tid = kNvtxThreadBit | s.thread;
    range_threads.insert(s.thread);
    const auto parts = nvtx_path_parts(s.path);
    events.push_back({{"ph", "X"},
                      {"cat", "nvtx"},
                      {"name", parts.empty() ? s.path : parts.back()},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", (s.start + shift) * kMicroseconds},
                      {"dur", (s.end - s.start) * kMicroseconds},
                      {"args", {{"path", s.path}}}});
  }
  int order = 0;
  for (const std::uint32_t thread : range_threads) {
    const std::uint32_t tid = kNvtxThreadBit | thread;
    events.push_back(
        metadata("thread_name", pid, tid, {{"name", fmt::format("NVTX · thread {}", thread)}}));
    events.push_back(
        metadata("thread_sort_index", pid, tid, {{"sort_index", (1 << 29) + order++}}));
  }
}

json other_data(const Report& report) {
  return {{"tool", report.tool.name + " " + report.tool.version},
          {"git_sha", report.tool.git_sha},
          {"lab", report.subject()},
          {"device", report.device.name},
          {"created_utc", report.created_utc}};
}

// The traced variant of a profiled program's report (`gpulab profile --trace`).
const Timeline* program_timeline(const Report& r) {
  for (const auto& v : r.variants)
    if (v.timeline) return &*v.timeline;
  return nullptr;
}

}  // namespace

json trace_events(const Report& report) {
  json events = json::array();
  int pid = 0;
  for (const auto& v : report.variants) {
    if (!v.timeline) continue;
    ++pid;
    add_process(events, pid,
                fmt::format("GPU {} {} · {}/{}", report.device.index, report.device.name,
                            report.subject(), v.name),
                *v.timeline, 0);
  }
  if (pid == 0)
    throw UsageError(
        fmt::format("the {} report has no timeline: only traced labs (gpulab list "
                    "marks them) record one",
                    report.subject().empty() ? "given" : "'" + report.subject() + "'"));
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", other_data(report)}};
}

json trace_events_of_ranks(const std::vector<Report>& ranks) {
  const auto traced = by_rank(ranks);
  for (const Report* r : traced)
    if (!program_timeline(*r))
      throw UsageError(
          fmt::format("rank {}'s report has no timeline: profile each rank with "
                      "gpulab profile --trace",
                      r->program->rank->rank));
  // One clock where every rank ran on one host and says where its times begin; else each
  // rank's from its own first activity.
  bool one_clock = true;
  std::uint64_t earliest = 0;
  for (const Report* r : traced) {
    const std::uint64_t origin = program_timeline(*r)->origin_ns;
    one_clock = one_clock && origin && r->program->rank->host == traced[0]->program->rank->host;
    earliest = earliest ? std::min(earliest, origin) : origin;
  }
  json events = json::array();
  for (const Report* r : traced) {
    const RankInfo& k = *r->program->rank;
    const Timeline& t = *program_timeline(*r);
    const double shift = one_clock ? static_cast<double>(t.origin_ns - earliest) * 1e-9 : 0;
    add_process(events, static_cast<int>(k.rank) + 1,
                fmt::format("rank {}{} · GPU {} {}", k.rank, k.host.empty() ? "" : " on " + k.host,
                            r->device.index, r->device.name),
                t, shift);
  }
  json other = other_data(*traced[0]);
  other["ranks"] = traced.size();
  other["clock"] = one_clock ? "one host's: the ranks line up"
                             : "each rank's own from its first activity (several hosts, or a "
                               "report without its clock)";
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace gpulab::report
