#include "reports/trace_assembly.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "reports/kernel_name.hpp"

namespace gpulab::report {

std::vector<TraceRecord> merge_migrations(std::vector<TraceRecord> records) {
  std::vector<TraceRecord> out;
  std::map<std::pair<std::string, std::string>, std::size_t> open;  // (name, cause) -> index
  for (TraceRecord& r : records) {
    if (r.activity.kind == ActivityKind::migration) {
      const auto key = std::make_pair(r.activity.name, r.activity.cause);
      const auto it = open.find(key);
      if (it != open.end() && r.start <= out[it->second].end + kMigrationMergeGapNs) {
        TraceRecord& m = out[it->second];
        m.end = std::max(m.end, r.end);
        m.activity.bytes += r.activity.bytes;
        m.activity.records += r.activity.records;
        continue;
      }
      open[key] = out.size();
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Activity> assemble_activities(std::vector<TraceRecord> records, std::uint64_t since) {
  records.erase(std::remove_if(records.begin(), records.end(),
                               [&](const TraceRecord& r) { return r.start < since; }),
                records.end());
  std::stable_sort(records.begin(), records.end(), [](const TraceRecord& a, const TraceRecord& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.activity.kind < b.activity.kind;
  });
  records = merge_migrations(std::move(records));
  std::map<std::string, std::string> names;  // a kernel launched often is demangled once
  std::vector<Activity> out;
  out.reserve(records.size());
  const std::uint64_t origin = records.empty() ? 0 : records.front().start;
  for (TraceRecord& r : records) {
    if (r.activity.kind == ActivityKind::kernel) {
      auto [it, fresh] = names.try_emplace(r.activity.name);
      if (fresh) it->second = display_name(demangle(r.activity.name));
      r.activity.name = it->second;
    }
    r.activity.start = static_cast<double>(r.start - origin) * 1e-9;
    r.activity.end = static_cast<double>(r.end - origin) * 1e-9;
    out.push_back(std::move(r.activity));
  }
  return out;
}

TraceCounts& TraceCounts::operator+=(const TraceCounts& other) {
  cpu_page_faults += other.cpu_page_faults;
  gpu_page_faults += other.gpu_page_faults;
  lost += other.lost;
  unreadable = unreadable || other.unreadable;
  return *this;
}

void add_trace_counts(Timeline& timeline, const TraceCounts& counts) {
  auto& um = timeline.unified_memory;
  const auto add_note = [&um](const std::string& text) {
    if (!um.note.empty()) um.note += "; ";
    um.note += text;
  };
  um.cpu_page_faults = counts.cpu_page_faults;
  if (counts.gpu_page_faults > 0) {
    um.gpu_page_faults = counts.gpu_page_faults;
  } else if (std::any_of(timeline.activities.begin(), timeline.activities.end(),
                         [](const Activity& a) { return a.cause == "on-demand"; })) {
    add_note("the driver delivered no GPU page-fault records");
  }
  if (counts.lost > 0)
    add_note(fmt::format("{} activity records dropped or without timestamps", counts.lost));
  if (counts.unreadable)
    add_note("an activity buffer held a record CUPTI could not read; the rest was lost");
}

}  // namespace gpulab::report
