#include "reports/profile_records.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/json_reader.hpp"
#include "reports/record_line.hpp"

namespace gpulab::report {
namespace {

using nlohmann::json;

std::string line_of(json j) { return j.dump() + "\n"; }

json shape(const std::uint32_t (&v)[3]) { return json::array({v[0], v[1], v[2]}); }

void read_shape(const RecordLine::Object& r, std::string_view key, std::uint32_t (&v)[3]) {
  if (!r.has(key)) return;
  const auto sizes = r.integers(key);
  for (std::size_t i = 0; i < 3 && i < sizes.size(); ++i)
    v[i] = static_cast<std::uint32_t>(sizes[i]);
}

json attributes_json(const StaticAttributes& a) {
  return {{"registers_per_thread", a.registers_per_thread},
          {"local_bytes_per_thread", a.local_bytes_per_thread},
          {"static_shared_bytes", a.static_shared_bytes},
          {"max_active_blocks_per_sm", a.max_active_blocks_per_sm},
          {"theoretical_occupancy", a.theoretical_occupancy}};
}

StaticAttributes read_attributes(const RecordLine::Object& a) {
  StaticAttributes s;
  s.registers_per_thread = static_cast<int>(a.integer_or("registers_per_thread", 0));
  s.local_bytes_per_thread = static_cast<std::uint64_t>(a.integer_or("local_bytes_per_thread", 0));
  s.static_shared_bytes = static_cast<std::uint64_t>(a.integer_or("static_shared_bytes", 0));
  s.max_active_blocks_per_sm = static_cast<int>(a.integer_or("max_active_blocks_per_sm", 0));
  s.theoretical_occupancy = a.number_or("theoretical_occupancy", 0);
  return s;
}

// NaN and infinities have no JSON form: such a value is left out, as in reports.
json finite(const std::map<std::string, double>& values) {
  json out = json::object();
  for (const auto& [name, value] : values)
    if (std::isfinite(value)) out[name] = value;
  return out;
}

void read_line(const RecordLine::Object& r, RecordSet& into) {
  const std::string& type = r.str("record");
  const std::int64_t pid = r.integer("pid");
  if (type == "process") {
    RecordedProcess p;
    p.pid = pid;
    p.parent_pid = r.integer_or("parent_pid", 0);
    p.mode = r.str_or("mode", "counters");
    p.cupti_version = static_cast<int>(r.integer_or("cupti_version", 0));
    p.chip = r.str_or("chip", "");
    p.refused = r.str_or("refused", "");
    // A process's later line (a refusal after its start) replaces its earlier one.
    auto same = std::find_if(into.processes.begin(), into.processes.end(),
                             [&](const RecordedProcess& q) { return q.pid == pid; });
    if (same != into.processes.end())
      *same = std::move(p);
    else
      into.processes.push_back(std::move(p));
  } else if (type == "launch") {
    RecordedLaunch& l = into.launches.emplace_back();
    into.launch_positions[{pid, r.integer("index")}] = into.launches.size() - 1;
    l.pid = pid;
    l.index = r.integer("index");
    l.correlation_id = static_cast<std::uint32_t>(r.integer_or("correlation_id", 0));
    l.mangled_name = r.str("name");
    read_shape(r, "grid", l.grid);
    read_shape(r, "block", l.block);
    l.dynamic_shared_bytes = static_cast<std::uint32_t>(r.integer_or("dynamic_shared_bytes", 0));
    if (r.has("attributes")) l.attributes = read_attributes(r.object("attributes"));
    l.nvtx = r.strings_or_empty("nvtx");
    l.matched = r.boolean_or("matched", false);
    l.profiled = r.boolean_or("profiled", false);
    l.passes = static_cast<int>(r.integer_or("passes", 0));
    l.metrics = r.number_map_or_empty("metrics");
    l.error = r.str_or("error", "");
  } else if (type == "counters") {
    const std::int64_t index = r.integer("launch_index");
    const auto at = into.launch_positions.find({pid, index});
    if (at == into.launch_positions.end()) {
      ++into.orphan_counters;
      return;
    }
    RecordedLaunch* launch = &into.launches[at->second];
    launch->passes = static_cast<int>(r.integer_or("passes", 0));
    launch->metrics = r.number_map_or_empty("metrics");
    launch->error = r.str_or("error", "");
  } else if (type == "kernel") {
    RecordedKernelTime& k = into.kernel_times.emplace_back();
    k.pid = pid;
    k.correlation_id = static_cast<std::uint32_t>(r.integer("correlation_id"));
    k.start_ns = static_cast<std::uint64_t>(r.integer("start_ns"));
    k.end_ns = static_cast<std::uint64_t>(r.integer("end_ns"));
    k.stream = static_cast<std::uint32_t>(r.integer_or("stream", 0));
    k.registers_per_thread = static_cast<int>(r.integer_or("registers_per_thread", 0));
    k.static_shared_bytes = static_cast<std::uint32_t>(r.integer_or("static_shared_bytes", 0));
    k.local_bytes_per_thread =
        static_cast<std::uint32_t>(r.integer_or("local_bytes_per_thread", 0));
  } else if (type == "tally") {
    RecordedTally t;
    t.pid = pid;
    t.mangled_name = r.str("name");
    t.matched = r.boolean_or("matched", false);
    t.launches = r.integer("launches");
    t.unmatched = r.integer_or("unmatched", t.matched ? 0 : t.launches);
    t.timed_launches = r.integer_or("timed_launches", 0);
    t.total_seconds = r.number_or("total_seconds", 0);
    if (t.launches < 0 || t.timed_launches < 0 || t.unmatched < 0 || t.unmatched > t.launches ||
        !(t.total_seconds >= 0) || !std::isfinite(t.total_seconds))
      throw NotARecord("a tally holds a negative, inconsistent or non-finite count");
    // Cumulative: a later line of the same process and function holds at least as much.
    RecordedTally& kept = into.tallies[{pid, t.mangled_name}];
    if (t.launches >= kept.launches && t.timed_launches >= kept.timed_launches) kept = std::move(t);
  } else if (type == "range") {
    RecordedRange g;
    g.pid = pid;
    g.thread = static_cast<std::uint32_t>(r.integer_or("thread", 0));
    g.path = r.strings_or_empty("path");
    g.start_ns = static_cast<std::uint64_t>(r.integer("start_ns"));
    g.end_ns = static_cast<std::uint64_t>(r.integer("end_ns"));
    if (g.path.empty() || g.end_ns < g.start_ns)
      throw NotARecord("a range without a name, or ending before it starts");
    into.ranges.push_back(std::move(g));
  } else if (type == "watchdog") {
    RecordedWatchdog& w = into.watchdogs.emplace_back();
    w.pid = pid;
    w.launch_index = r.integer_or("launch_index", 0);
    w.mangled_name = r.str_or("name", "");
    w.seconds = r.number_or("seconds", 0);
  } else if (type == "end") {
    into.ended.push_back(pid);
  } else if (type == "activity") {
    TraceRecord& t = into.activities.emplace_back();
    const auto kind = activity_kind_from_string(r.str("kind"));
    if (!kind) throw NotARecord("an unknown activity kind");
    t.activity.kind = *kind;
    t.activity.name = r.str_or("name", "");
    t.activity.stream = static_cast<std::uint32_t>(r.integer_or("stream", 0));
    t.activity.device = static_cast<std::uint32_t>(r.integer_or("device", 0));
    t.activity.bytes = static_cast<std::uint64_t>(r.integer_or("bytes", 0));
    t.activity.source_memory = r.str_or("source_memory", "");
    t.activity.destination_memory = r.str_or("destination_memory", "");
    t.activity.cause = r.str_or("cause", "");
    t.start = static_cast<std::uint64_t>(r.integer("start_ns"));
    t.end = static_cast<std::uint64_t>(r.integer("end_ns"));
  } else if (type == "trace-counts") {
    TraceCounts c;
    c.cpu_page_faults = static_cast<std::uint64_t>(r.integer_or("cpu_page_faults", 0));
    c.gpu_page_faults = static_cast<std::uint64_t>(r.integer_or("gpu_page_faults", 0));
    c.lost = static_cast<std::uint64_t>(r.integer_or("lost", 0));
    c.unreadable = r.boolean_or("unreadable", false);
    into.trace_counts[pid] += c;
  } else if (is_source_record(type)) {
    read_source_record(type, r, pid, into.sources);
  } else {
    throw NotARecord("an unknown record type");
  }
}

json activity_json(const TraceRecord& t) {
  const Activity& a = t.activity;
  json out = {{"kind", to_string(a.kind)}, {"name", a.name},      {"stream", a.stream},
              {"bytes", a.bytes},          {"start_ns", t.start}, {"end_ns", t.end}};
  if (a.device != 0) out["device"] = a.device;
  if (!a.source_memory.empty()) out["source_memory"] = a.source_memory;
  if (!a.destination_memory.empty()) out["destination_memory"] = a.destination_memory;
  if (!a.cause.empty()) out["cause"] = a.cause;
  return out;
}

}  // namespace

std::string to_line(const RecordedProcess& r) {
  return line_of({{"record", "process"},
                  {"pid", r.pid},
                  {"parent_pid", r.parent_pid},
                  {"mode", r.mode},
                  {"cupti_version", r.cupti_version},
                  {"chip", r.chip},
                  {"refused", r.refused}});
}

std::string to_line(const RecordedLaunch& r) {
  json out = {{"record", "launch"},      {"pid", r.pid},
              {"index", r.index},        {"correlation_id", r.correlation_id},
              {"name", r.mangled_name},  {"grid", shape(r.grid)},
              {"block", shape(r.block)}, {"dynamic_shared_bytes", r.dynamic_shared_bytes},
              {"matched", r.matched},    {"profiled", r.profiled}};
  if (r.attributes) out["attributes"] = attributes_json(*r.attributes);
  if (!r.nvtx.empty()) out["nvtx"] = r.nvtx;
  if (r.profiled) {
    out["passes"] = r.passes;
    out["metrics"] = finite(r.metrics);
  }
  if (!r.error.empty()) out["error"] = r.error;
  return line_of(std::move(out));
}

std::string to_line(const RecordedKernelTime& r) {
  return line_of({{"record", "kernel"},
                  {"pid", r.pid},
                  {"correlation_id", r.correlation_id},
                  {"start_ns", r.start_ns},
                  {"end_ns", r.end_ns},
                  {"stream", r.stream},
                  {"registers_per_thread", r.registers_per_thread},
                  {"static_shared_bytes", r.static_shared_bytes},
                  {"local_bytes_per_thread", r.local_bytes_per_thread}});
}

std::string to_line(const RecordedWatchdog& r) {
  return line_of({{"record", "watchdog"},
                  {"pid", r.pid},
                  {"launch_index", r.launch_index},
                  {"name", r.mangled_name},
                  {"seconds", r.seconds}});
}

std::string to_line(const RecordedCounters& r) {
  json out = {{"record", "counters"},
              {"pid", r.pid},
              {"launch_index", r.launch_index},
              {"passes", r.passes},
              {"metrics", finite(r.metrics)}};
  if (!r.error.empty()) out["error"] = r.error;
  return line_of(std::move(out));
}

std::string to_line(const RecordedTally& r) {
  return line_of({{"record", "tally"},
                  {"pid", r.pid},
                  {"name", r.mangled_name},
                  {"matched", r.matched},
                  {"launches", r.launches},
                  {"unmatched", r.unmatched},
                  {"timed_launches", r.timed_launches},
                  {"total_seconds", r.total_seconds}});
}

std::string to_line(const RecordedRange& r) {
  return line_of({{"record", "range"},
                  {"pid", r.pid},
                  {"thread", r.thread},
                  {"path", r.path},
                  {"start_ns", r.start_ns},
                  {"end_ns", r.end_ns}});
}

std::string end_line(std::int64_t pid) { return line_of({{"record", "end"}, {"pid", pid}}); }

std::string to_line(std::int64_t pid, const TraceRecord& r) {
  json out = activity_json(r);
  out["record"] = "activity";
  out["pid"] = pid;
  return line_of(std::move(out));
}

std::string to_line(std::int64_t pid, const TraceCounts& c) {
  return line_of({{"record", "trace-counts"},
                  {"pid", pid},
                  {"cpu_page_faults", c.cpu_page_faults},
                  {"gpu_page_faults", c.gpu_page_faults},
                  {"lost", c.lost},
                  {"unreadable", c.unreadable}});
}

void RecordReader::read(std::string_view line, RecordSet& into) {
  if (line.empty()) return;
  try {
    line_.parse(line);
    read_line(line_.top(), into);
  } catch (const NotARecord&) {  // cut short by a kill, or not a record
    ++into.unreadable_lines;
  }
}

void read_records(std::istream& in, RecordSet& into) {
  RecordReader reader;
  for (std::string line; std::getline(in, line);) reader.read(line, into);
}

const char* to_string(InjectionMode mode) {
  return mode == InjectionMode::trace ? "trace" : "counters";
}

const char* to_string(ReplayMode mode) {
  switch (mode) {
    case ReplayMode::batch:
      return "batch";
    case ReplayMode::none:
      return "none";
    case ReplayMode::kernel:
      break;
  }
  return "kernel";
}

std::optional<InjectionMode> injection_mode_from_string(const std::string& text) {
  for (auto mode : {InjectionMode::counters, InjectionMode::trace})
    if (text == to_string(mode)) return mode;
  return std::nullopt;
}

std::optional<ReplayMode> replay_mode_from_string(const std::string& text) {
  for (auto mode : {ReplayMode::kernel, ReplayMode::batch, ReplayMode::none})
    if (text == to_string(mode)) return mode;
  return std::nullopt;
}

std::string to_json_text(const InjectionConfig& c) {
  return json{{"mode", to_string(c.mode)},
              {"kernel_filter", c.kernel_filter},
              {"nvtx_include", c.nvtx_include},
              {"nvtx_exclude", c.nvtx_exclude},
              {"profiler_api_range", c.profiler_api_range},
              {"launch_skip", c.launch_skip},
              {"launch_count", c.launch_count},
              {"replay", to_string(c.replay)},
              {"metrics", c.metrics},
              {"watchdog_seconds", c.watchdog_seconds},
              {"source", c.source},
              {"output_dir", c.output_dir}}
      .dump();
}

InjectionConfig injection_config_from_json(const std::string& text) {
  check_json_shape(text, kInjectionConfigVariable);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception&) {
    throw UsageError(std::string(kInjectionConfigVariable) + " is not valid JSON");
  }
  const Reader r(doc, kInjectionConfigVariable);
  InjectionConfig c;
  const auto mode = injection_mode_from_string(r.str_or("mode", to_string(c.mode)));
  if (!mode) Reader::fail(r.where() + ".mode", "expected counters or trace");
  c.mode = *mode;
  c.kernel_filter = r.str_or("kernel_filter", "");
  for (const auto& field :
       {std::pair{"nvtx_include", &c.nvtx_include}, std::pair{"nvtx_exclude", &c.nvtx_exclude}}) {
    std::vector<std::string>* into = field.second;  // a lambda cannot capture a binding
    if (r.has(field.first))
      r.each(field.first, [&](const Reader& e) { into->push_back(e.as_string()); });
  }
  c.profiler_api_range = r.boolean_or("profiler_api_range", false);
  c.launch_skip = r.integer_or("launch_skip", 0);
  c.launch_count = r.integer_or("launch_count", 0);
  const auto replay = replay_mode_from_string(r.str_or("replay", to_string(c.replay)));
  if (!replay) Reader::fail(r.where() + ".replay", "expected kernel, batch or none");
  c.replay = *replay;
  if (r.has("metrics"))
    r.each("metrics", [&](const Reader& m) { c.metrics.push_back(m.as_string()); });
  c.watchdog_seconds = r.num_or("watchdog_seconds", 0);
  c.source = r.boolean_or("source", false);
  c.output_dir = r.str("output_dir");
  return c;
}

}  // namespace gpulab::report
