#include "reports/timeline_json.hpp"

#include "reports/diagnosis_json.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

json activity_json(const Activity& a) {
  json out = {{"kind", to_string(a.kind)},
              {"name", a.name},
              {"stream", a.stream},
              {"start", a.start},
              {"end", a.end}};
  if (a.device != 0) out["device"] = a.device;
  if (a.kind != ActivityKind::kernel) out["bytes"] = a.bytes;
  if (!a.source_memory.empty()) out["source_memory"] = a.source_memory;
  if (!a.destination_memory.empty()) out["destination_memory"] = a.destination_memory;
  if (!a.cause.empty()) out["cause"] = a.cause;
  if (a.records != 1) out["records"] = a.records;
  return out;
}

json summary_json(const TimelineSummary& s) {
  json rates = json::array();
  for (const auto& r : s.rates)
    rates.push_back({{"direction", r.direction},
                     {"host_memory", r.host_memory},
                     {"bytes", r.bytes},
                     {"count", r.count},
                     {"busy_seconds", r.busy_seconds},
                     {"bandwidth", r.bandwidth}});
  return {{"span_seconds", s.span_seconds},
          {"kernel_seconds", s.kernel_seconds},
          {"transfer_seconds", s.transfer_seconds},
          {"on_demand_seconds", s.on_demand_seconds},
          {"busy_seconds", s.busy_seconds},
          {"overlap_fraction", s.overlap_fraction},
          {"idle_fraction", s.idle_fraction},
          {"exposed_transfer_fraction", s.exposed_transfer_fraction},
          {"on_demand_fraction", s.on_demand_fraction},
          {"kernels", s.kernels},
          {"copies", s.copies},
          {"mean_kernel_seconds", s.mean_kernel_seconds},
          {"migrated_htod_bytes", s.migrated_htod_bytes},
          {"migrated_dtoh_bytes", s.migrated_dtoh_bytes},
          {"on_demand_bytes", s.on_demand_bytes},
          {"communication_seconds", s.communication_seconds},
          {"communication_overlap_fraction", s.communication_overlap_fraction},
          {"algorithm_bandwidth", s.algorithm_bandwidth},
          {"bus_bandwidth", s.bus_bandwidth},
          {"copy_rates", std::move(rates)}};
}

Activity read_activity(const Reader& r) {
  Activity a;
  a.kind = parse_enum<ActivityKind>(r, "kind", activity_kind_from_string,
                                    "kernel, copy, memset, migration");
  a.name = r.str("name");
  a.stream = static_cast<std::uint32_t>(r.integer_or("stream", 0));
  a.device = static_cast<std::uint32_t>(r.count_or("device", 0));
  a.start = r.num("start");
  a.end = r.num("end");
  if (!(a.end >= a.start))
    Reader::fail(r.where() + ".end", "before its start: a negative duration");
  if (a.end < a.start) Reader::fail(r.where() + ".end", "ends before it starts");
  a.bytes = r.count_or("bytes", 0);
  a.source_memory = r.str_or("source_memory", "");
  a.destination_memory = r.str_or("destination_memory", "");
  a.cause = r.str_or("cause", "");
  a.records = static_cast<std::uint32_t>(r.integer_or("records", 1));
  return a;
}

RangeSpan read_range(const Reader& r) {
  RangeSpan s;
  s.path = r.str("path");
  s.thread = static_cast<std::uint32_t>(r.count_or("thread", 0));
  s.start = r.num("start");
  s.end = r.num("end");
  if (!(s.end >= s.start))
    Reader::fail(r.where() + ".end", "before its start: a negative duration");
  return s;
}

}  // namespace

json timeline_json(const Timeline& t) {
  json activities = json::array();
  for (const auto& a : t.activities) activities.push_back(activity_json(a));
  const auto& um = t.unified_memory;
  json unified = {
      {"available", um.available},
      {"note", um.note},
      {"cpu_page_faults", um.cpu_page_faults},
      {"gpu_page_faults", um.gpu_page_faults ? json(*um.gpu_page_faults) : json(nullptr)}};
  json out = {{"kernel_records", t.kernel_records},
              {"trace_seconds", t.trace_seconds},
              {"summary", summary_json(t.summary)},
              {"unified_memory", std::move(unified)},
              {"activities", std::move(activities)}};
  if (!t.ranges.empty()) {
    json ranges = json::array();
    for (const auto& s : t.ranges)
      ranges.push_back(
          {{"path", s.path}, {"thread", s.thread}, {"start", s.start}, {"end", s.end}});
    out["ranges"] = std::move(ranges);
  }
  if (t.origin_ns) out["origin_ns"] = t.origin_ns;
  if (t.diagnosis) out["diagnosis"] = diagnosis_json(*t.diagnosis);
  return out;
}

Timeline read_timeline(const Reader& r) {
  Timeline t;
  t.kernel_records = r.str_or("kernel_records", "");
  t.trace_seconds = r.num_or("trace_seconds", 0);
  t.origin_ns = r.count_or("origin_ns", 0);
  if (r.has("unified_memory")) {
    const auto um = r.at("unified_memory");
    t.unified_memory.available = um.boolean_or("available", false);
    t.unified_memory.note = um.str_or("note", "");
    t.unified_memory.cpu_page_faults =
        static_cast<std::uint64_t>(um.integer_or("cpu_page_faults", 0));
    if (um.has("gpu_page_faults"))
      t.unified_memory.gpu_page_faults = static_cast<std::uint64_t>(um.integer("gpu_page_faults"));
  }
  r.each("activities", [&](const Reader& a) { t.activities.push_back(read_activity(a)); });
  if (r.has("ranges"))
    r.each("ranges", [&](const Reader& s) { t.ranges.push_back(read_range(s)); });
  if (r.has("diagnosis")) t.diagnosis = read_diagnosis(r.at("diagnosis"));
  t.summary = summarize(t);
  return t;
}

}  // namespace gpulab::report
