#include "reports/report_json.hpp"

#include <cmath>
#include <iostream>
#include <set>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/base/output_file.hpp"
#include "reports/diagnosis_json.hpp"
#include "reports/json_reader.hpp"
#include "reports/kernel_json.hpp"
#include "reports/principal.hpp"
#include "reports/report.hpp"
#include "reports/timeline_json.hpp"

namespace gpulab::report {
namespace {

// ---- writing ---------------------------------------------------------------------------------

json work_json(const WorkModel& w) {
  json out = {{"bytes_read", w.bytes_read}, {"bytes_written", w.bytes_written}, {"flops", w.flops}};
  if (w.collective_bytes > 0) {
    out["collective_bytes"] = w.collective_bytes;
    out["ranks"] = w.ranks;
  }
  return out;
}

// Derived from the kernels' diagnoses when written; not read back (the diagnosis is redone).
json principal_json(const Principal& p) {
  return {{"finding", p.finding}, {"where", p.where}, {"share", p.share}};
}

json variant_json(const Variant& v, bool as_columns) {
  json kernels = json::array();
  if (!as_columns)
    for (const auto& k : v.kernels) kernels.push_back(kernel_json(k));
  const auto& c = v.check;
  const auto& t = v.timing;
  json out = {
      {"name", v.name},
      {"role", to_string(v.role)},
      {"description", v.description},
      {"status", to_string(v.status)},
      {"skip_reason", v.skip_reason},
      {"check",
       {{"status", to_string(c.status)},
        {"max_abs_error", c.max_abs_error},
        {"max_rel_error", c.max_rel_error},
        {"tolerance_abs", c.tolerance_abs},
        {"tolerance_rel", c.tolerance_rel},
        {"elements", c.elements},
        {"mismatches", c.mismatches},
        {"message", c.message}}},
      {"timing",
       {{"warmup", t.warmup},
        {"repeat", t.repeat},
        {"cold_l2", t.cold_l2},
        {"median", t.median},
        {"min", t.min},
        {"max", t.max},
        {"mean", t.mean},
        {"stddev", t.stddev},
        {"samples", t.samples}}},
      {"effective_bandwidth", v.effective_bandwidth},
      {"roof_fraction", v.roof_fraction},
      {"speedup", v.speedup},
      {"counters",
       {{"collected", v.counters.collected},
        {"metric_set", v.counters.metric_set},
        {"passes", v.counters.passes},
        {"replay", v.counters.replay},
        {"cache_control", v.counters.cache_control},
        {"note", v.counters.note},
        {"collection_seconds", v.counters.collection_seconds}}},
  };
  if (as_columns)
    out["launches"] = launch_columns_json(v.kernels);
  else
    out["kernels"] = std::move(kernels);
  if (v.work) out["work"] = work_json(*v.work);
  // Written only for adaptive timing: a fixed count's reports read as they always have.
  if (t.stopped != TimingStop::count) out["timing"]["stopped"] = to_string(t.stopped);
  if (v.timeline) out["timeline"] = timeline_json(*v.timeline);
  if (has_diagnosis(v)) out["principal"] = principal_json(variant_principal(v));
  if (v.totals) {
    const auto& f = *v.totals;
    out["totals"] = {{"launches", f.launches},
                     {"timed_launches", f.timed_launches},
                     {"profiled_launches", f.profiled_launches},
                     {"total_seconds", f.total_seconds},
                     {"share_of_gpu_time", f.share_of_gpu_time}};
  }
  return out;
}

json program_json(const ProgramInfo& p) {
  json processes = json::array();
  for (const auto& q : p.processes)
    processes.push_back({{"pid", q.pid},
                         {"parent_pid", q.parent_pid},
                         {"launches", q.launches},
                         {"complete", q.complete},
                         {"refused", q.refused},
                         {"note", q.note}});
  json out = {{"argv", p.argv},
              {"signal", p.signal},
              {"ended", p.ended},
              {"wall_seconds", p.wall_seconds},
              {"replay", p.replay},
              {"kernel_filter", p.kernel_filter},
              {"launch_skip", p.launch_skip},
              {"launch_count", p.launch_count},
              {"launches", p.launches},
              {"profiled_launches", p.profiled_launches},
              {"kernel_seconds", p.kernel_seconds},
              {"processes", std::move(processes)},
              {"left_out", p.left_out}};
  out["exit_code"] = p.exit_code ? json(*p.exit_code) : json(nullptr);
  // The NVTX selection and ranges only where there are some: a report without reads as before.
  if (!p.nvtx_include.empty()) out["nvtx_include"] = p.nvtx_include;
  if (!p.nvtx_exclude.empty()) out["nvtx_exclude"] = p.nvtx_exclude;
  if (p.capture_range != "none") out["capture_range"] = p.capture_range;
  if (p.source) out["source"] = true;
  if (!p.ranges.empty()) {
    json ranges = json::array();
    for (const auto& r : p.ranges)
      ranges.push_back({{"path", r.path}, {"launches", r.launches}, {"seconds", r.seconds}});
    out["ranges"] = std::move(ranges);
  }
  if (p.rank) {
    json rank = {{"launcher", p.rank->launcher}, {"rank", p.rank->rank}, {"host", p.rank->host}};
    rank["local_rank"] = p.rank->local_rank ? json(*p.rank->local_rank) : json(nullptr);
    rank["world_size"] = p.rank->world_size ? json(*p.rank->world_size) : json(nullptr);
    out["rank"] = std::move(rank);
  }
  return out;
}

// ---- reading ---------------------------------------------------------------------------------

// nlohmann's message without its "[json.exception.out_of_range.406] " prefix.
std::string json_problem(const json::exception& e) {
  const std::string what = e.what();
  const auto end = what.rfind("] ", what.find(' '));
  return end == std::string::npos ? what : what.substr(end + 2);
}

WorkModel read_work(const Reader& w) {
  WorkModel m{w.amount_or("bytes_read", 0), w.amount_or("bytes_written", 0),
              w.amount_or("flops", 0)};
  m.collective_bytes = w.amount_or("collective_bytes", 0);
  m.ranks = static_cast<int>(w.count_or("ranks", 0));
  return m;
}

DeviceInfo read_device(const Reader& r) {
  DeviceInfo d;
  d.index = static_cast<int>(r.integer_or("index", 0));
  d.name = r.str("name");
  d.chip = r.str_or("chip", "");
  const auto cc = r.str_or("compute_capability", "0.0");
  if (std::sscanf(cc.c_str(), "%d.%d", &d.cc_major, &d.cc_minor) != 2)
    Reader::fail(r.where() + ".compute_capability", "expected MAJOR.MINOR");
  d.sm_count = static_cast<int>(r.integer_or("sm_count", 0));
  d.global_memory_bytes = r.count_or("global_memory_bytes", 0);
  d.l2_bytes = r.count_or("l2_bytes", 0);
  d.shared_per_sm_bytes = r.count_or("shared_per_sm_bytes", 0);
  d.max_warps_per_sm = static_cast<int>(r.integer_or("max_warps_per_sm", 0));
  d.registers_per_sm = static_cast<int>(r.integer_or("registers_per_sm", 0));
  d.max_blocks_per_sm = static_cast<int>(r.integer_or("max_blocks_per_sm", 0));
  d.sm_clock_hz = r.num_or("sm_clock_hz", 0);
  d.memory_clock_hz = r.num_or("memory_clock_hz", 0);
  d.memory_bus_bits = static_cast<int>(r.integer_or("memory_bus_bits", 0));
  d.driver_version = static_cast<int>(r.integer_or("driver_version", 0));
  d.runtime_version = static_cast<int>(r.integer_or("runtime_version", 0));
  d.cupti_version = static_cast<int>(r.integer_or("cupti_version", 0));
  if (r.has("roofs")) {
    const auto roofs = r.at("roofs");
    d.roofs.theoretical_bandwidth = roofs.num_or("theoretical_bandwidth", 0);
    d.roofs.copy_bandwidth = roofs.num_or("copy_bandwidth", 0);
    d.roofs.copy_bytes = roofs.count_or("copy_bytes", 0);
  }
  if (r.has("counters")) {
    const auto c = r.at("counters");
    d.counters_available = c.boolean_or("available", false);
    d.counters_unavailable_reason = c.str_or("reason", "");
  }
  return d;
}

Variant read_variant(const Reader& r) {
  Variant v;
  v.name = r.str("name");
  v.role =
      parse_enum<Role>(r, "role", role_from_string, "baseline, optimized, reference, function");
  v.description = r.str_or("description", "");
  v.status = parse_enum<VariantStatus>(r, "status", variant_status_from_string,
                                       "ok, failed, skipped");
  v.skip_reason = r.str_or("skip_reason", "");

  const auto c = r.at("check");
  v.check.status = parse_enum<CheckStatus>(c, "status", check_status_from_string,
                                           "passed, failed, skipped");
  v.check.max_abs_error = c.num_or("max_abs_error", 0);
  v.check.max_rel_error = c.num_or("max_rel_error", 0);
  v.check.tolerance_abs = c.num_or("tolerance_abs", 0);
  v.check.tolerance_rel = c.num_or("tolerance_rel", 0);
  v.check.elements = c.count_or("elements", 0);
  v.check.mismatches = c.count_or("mismatches", 0);
  v.check.message = c.str_or("message", "");

  const auto t = r.at("timing");
  v.timing.warmup = static_cast<int>(t.integer_or("warmup", 0));
  v.timing.repeat = static_cast<int>(t.integer_or("repeat", 0));
  v.timing.cold_l2 = t.boolean_or("cold_l2", false);
  if (t.has("stopped"))
    v.timing.stopped = parse_enum<TimingStop>(t, "stopped", timing_stop_from_string,
                                              "count, noise, settled, timeout");
  v.timing.median = t.amount("median");
  v.timing.min = t.amount_or("min", v.timing.median);
  v.timing.max = t.amount_or("max", v.timing.median);
  v.timing.mean = t.amount_or("mean", v.timing.median);
  v.timing.stddev = t.amount_or("stddev", 0);
  if (t.has("samples"))
    t.each("samples", [&](const Reader& s) { v.timing.samples.push_back(s.as_amount()); });

  if (r.has("work")) v.work = read_work(r.at("work"));
  v.effective_bandwidth = r.amount_or("effective_bandwidth", 0);
  v.roof_fraction = r.amount_or("roof_fraction", 0);
  v.speedup = r.amount_or("speedup", 0);
  if (r.has("counters")) {
    const auto k = r.at("counters");
    v.counters.collected = k.boolean_or("collected", false);
    v.counters.metric_set = k.str_or("metric_set", "");
    v.counters.passes = static_cast<int>(k.integer_or("passes", 0));
    v.counters.replay = k.str_or("replay", "");
    v.counters.cache_control = k.str_or("cache_control", "");
    v.counters.note = k.str_or("note", "");
    v.counters.collection_seconds = k.num_or("collection_seconds", 0);
  }
  if (r.has("kernels") && r.has("launches"))
    Reader::fail(r.where() + ".launches",
                 "a variant's kernels are one object each or columns, not both");
  if (r.has("kernels")) r.each("kernels", [&](const Reader& k) {
    v.kernels.push_back(read_kernel(k));
  });
  if (r.has("launches")) v.kernels = read_launch_columns(r.at("launches"));
  if (r.has("timeline")) v.timeline = read_timeline(r.at("timeline"));
  if (r.has("totals")) {
    const auto t = r.at("totals");
    FunctionTotals& f = v.totals.emplace();
    f.launches = t.whole_amount_or("launches", 0);
    f.timed_launches = t.integer_or("timed_launches", 0);
    f.profiled_launches = t.integer_or("profiled_launches", 0);
    f.total_seconds = t.amount_or("total_seconds", 0);
    f.share_of_gpu_time = t.num_or("share_of_gpu_time", 0);
  }
  return v;
}

ProgramInfo read_program(const Reader& r) {
  ProgramInfo p;
  r.each("argv", [&](const Reader& a) { p.argv.push_back(a.as_string()); });
  if (p.argv.empty()) Reader::fail(r.where() + ".argv", "empty: the program is unknown");
  if (r.has("exit_code")) p.exit_code = static_cast<int>(r.integer("exit_code"));
  p.signal = r.str_or("signal", "");
  p.ended = r.str_or("ended", "");
  p.wall_seconds = r.amount_or("wall_seconds", 0);
  p.replay = r.str_or("replay", "");
  p.kernel_filter = r.str_or("kernel_filter", "");
  p.launch_skip = r.integer_or("launch_skip", 0);
  p.launch_count = r.integer_or("launch_count", 0);
  p.launches = r.integer_or("launches", 0);
  p.profiled_launches = r.integer_or("profiled_launches", 0);
  p.kernel_seconds = r.amount_or("kernel_seconds", 0);
  if (r.has("processes"))
    r.each("processes", [&](const Reader& q) {
      ProcessInfo& process = p.processes.emplace_back();
      process.pid = q.integer("pid");
      process.parent_pid = q.integer_or("parent_pid", 0);
      process.launches = q.integer_or("launches", 0);
      process.complete = q.boolean_or("complete", false);
      process.refused = q.boolean_or("refused", false);
      process.note = q.str_or("note", "");
    });
  for (const auto& field :
       {std::pair{"left_out", &p.left_out}, std::pair{"nvtx_include", &p.nvtx_include},
        std::pair{"nvtx_exclude", &p.nvtx_exclude}}) {
    std::vector<std::string>* into = field.second;  // a lambda cannot capture a binding
    if (r.has(field.first))
      r.each(field.first, [&](const Reader& s) { into->push_back(s.as_string()); });
  }
  p.capture_range = r.str_or("capture_range", "none");
  p.source = r.boolean_or("source", false);
  if (r.has("ranges"))
    r.each("ranges", [&](const Reader& q) {
      RangeTime& range = p.ranges.emplace_back();
      range.path = q.str("path");
      range.launches = q.whole_amount_or("launches", 0);
      range.seconds = q.amount_or("seconds", 0);
    });
  if (r.has("rank")) {
    const Reader q = r.at("rank");
    RankInfo& rank = p.rank.emplace();
    rank.launcher = q.str_or("launcher", "");
    rank.rank = q.integer("rank");
    if (q.has("local_rank")) rank.local_rank = q.integer("local_rank");
    if (q.has("world_size")) rank.world_size = q.integer("world_size");
    rank.host = q.str_or("host", "");
  }
  return p;
}

}  // namespace

nlohmann::json to_json(const DeviceInfo& d) {
  json out = {{"index", d.index},
              {"name", d.name},
              {"chip", d.chip},
              {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
              {"sm_count", d.sm_count},
              {"global_memory_bytes", d.global_memory_bytes},
              {"l2_bytes", d.l2_bytes},
              {"shared_per_sm_bytes", d.shared_per_sm_bytes},
              {"max_warps_per_sm", d.max_warps_per_sm},
              {"sm_clock_hz", d.sm_clock_hz},
              {"memory_clock_hz", d.memory_clock_hz},
              {"memory_bus_bits", d.memory_bus_bits},
              {"driver_version", d.driver_version},
              {"runtime_version", d.runtime_version},
              {"cupti_version", d.cupti_version},
              {"roofs",
               {{"theoretical_bandwidth", d.roofs.theoretical_bandwidth},
                {"copy_bandwidth", d.roofs.copy_bandwidth},
                {"copy_bytes", d.roofs.copy_bytes}}},
              {"counters",
               {{"available", d.counters_available}, {"reason", d.counters_unavailable_reason}}}};
  // Absent where unknown (reports older than the fields): the occupancy limiter then falls back
  // to the compute capability's values.
  if (d.registers_per_sm > 0) out["registers_per_sm"] = d.registers_per_sm;
  if (d.max_blocks_per_sm > 0) out["max_blocks_per_sm"] = d.max_blocks_per_sm;
  return out;
}

nlohmann::json to_json(const Report& report) {
  json variants = json::array();
  // A program's functions as columns over their launches: a job's thousands of launches.
  for (const auto& v : report.variants)
    variants.push_back(variant_json(v, report.program.has_value()));
  json out = {{"schema", kSchema},
              {"tool",
               {{"name", report.tool.name},
                {"version", report.tool.version},
                {"git_sha", report.tool.git_sha}}},
              {"argv", report.argv},
              {"created_utc", report.created_utc},
              {"device", to_json(report.device)}};
  // A report is of a lab or of a program, never both.
  if (report.program) {
    out["program"] = program_json(*report.program);
    if (has_diagnosis(report)) {
      out["program"]["principal"] = principal_json(program_principal(report));
      json by_range = json::array();
      for (const auto& r : range_principals(report)) {
        by_range.push_back(principal_json(r.principal));
        by_range.back()["range"] = r.range;
      }
      if (!by_range.empty()) out["program"]["range_principals"] = std::move(by_range);
    }
  } else {
    out["lab"] = {
        {"name", report.lab.name}, {"topic", report.lab.topic}, {"summary", report.lab.summary}};
  }
  out["params"] = report.params;
  out["work"] = work_json(report.work);
  out["variants"] = std::move(variants);
  out["warnings"] = report.warnings;
  if (!report.phases.empty()) {
    auto& phases = out["phases"] = nlohmann::json::array();
    for (const auto& p : report.phases)
      phases.push_back({{"phase", p.phase}, {"seconds", p.seconds}});
  }
  return out;
}

Report from_json(const nlohmann::json& doc) {
  const Reader root(doc, "");
  if (!doc.is_object()) Reader::fail("report", "expected a JSON object");
  Report report;
  if (!root.has("schema")) Reader::fail("schema", "missing (not a gpulab report?)");
  report.schema = root.str("schema");
  if (report.schema != kSchema && report.schema != kSchemaV3 && report.schema != kSchemaV2 &&
      report.schema != kSchemaV1) {
    Reader::fail("schema", "'" + report.schema + "' is not supported (this gpulab reads " +
                               std::string(kSchema) + ", " + kSchemaV3 + ", " + kSchemaV2 +
                               " and " + kSchemaV1 + ")");
  }
  if (root.has("tool")) {
    const auto t = root.at("tool");
    report.tool.name = t.str_or("name", "gpulab");
    report.tool.version = t.str_or("version", "");
    report.tool.git_sha = t.str_or("git_sha", "");
  }
  if (root.has("argv")) root.each("argv", [&](const Reader& a) {
    report.argv.push_back(a.as_string());
  });
  report.created_utc = root.str_or("created_utc", "");
  report.device = read_device(root.at("device"));
  if (report.schema != kSchemaV1 && root.has("program")) {
    if (root.has("lab")) Reader::fail("lab", "a report is of a lab or of a program, not both");
    report.program = read_program(root.at("program"));
  } else {
    const auto lab = root.at("lab");
    report.lab.name = lab.str("name");
    report.lab.topic = lab.str_or("topic", "");
    report.lab.summary = lab.str_or("summary", "");
  }
  if (root.has("params")) {
    const auto p = root.at("params");
    if (!p.node().is_object()) Reader::fail("params", "expected an object");
    for (auto it = p.node().begin(); it != p.node().end(); ++it)
      report.params[it.key()] = p.integer(it.key());
  }
  if (root.has("work")) report.work = read_work(root.at("work"));
  std::set<std::string> names;
  root.each("variants", [&](const Reader& v) {
    report.variants.push_back(read_variant(v));
    // Comparisons, selections and the diagnosis find a variant by its name.
    if (!names.insert(report.variants.back().name).second)
      Reader::fail(v.where() + ".name", "'" + report.variants.back().name +
                                            "' names an earlier variant too: names are unique");
  });
  if (root.has("warnings")) root.each("warnings", [&](const Reader& w) {
    report.warnings.push_back(w.as_string());
  });
  if (root.has("phases"))
    root.each("phases", [&](const Reader& p) {
      report.phases.push_back({p.str("phase"), p.num("seconds")});
      if (!(report.phases.back().seconds >= 0))
        Reader::fail(p.where() + ".seconds", "a phase cannot take negative time");
    });
  return report;
}

json read_json_file(const std::string& path) {
  const std::string text = read_file(path);
  check_json_shape(text, "'" + path + "'");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError("'" + path + "' is not valid JSON (byte " + std::to_string(e.byte) +
                     "): the file is truncated or malformed");
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw UsageError("'" + path + "' is not valid JSON: " + json_problem(e));
  }
}

Report report_from_document(const json& doc, const std::string& path) {
  try {
    return from_json(doc);
  } catch (const UsageError& e) {
    throw UsageError("'" + path + "': " + e.what());
  } catch (const json::exception& e) {  // a value the checks above let through: still bad input
    throw UsageError("'" + path + "': malformed report: " + json_problem(e));
  }
}

Report load_report(const std::string& path) {
  return report_from_document(read_json_file(path), path);
}

std::string report_file_text(const Report& report) {
  // A program's report is written on one line: a job's columns of numbers, indented, would
  // take one line each.
  return to_json(report).dump(report.program ? -1 : 2) + "\n";
}

void save_report(const std::string& path, const Report& report) {
  write_output(path, report_file_text(report), std::cout);
}

}  // namespace gpulab::report
