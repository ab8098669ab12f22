#include "reports/timeline.hpp"
#include "reports/report.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace gpulab::report {
namespace {

using Interval = std::pair<double, double>;  // [start, end), seconds
using Intervals = std::vector<Interval>;     // sorted, disjoint

Intervals merged(Intervals in) {
  std::sort(in.begin(), in.end());
  Intervals out;
  for (const auto& [start, end] : in) {
    if (end <= start) continue;
    if (!out.empty() && start <= out.back().second)
      out.back().second = std::max(out.back().second, end);
    else
      out.emplace_back(start, end);
  }
  return out;
}

double length(const Intervals& set) {
  double total = 0;
  for (const auto& [start, end] : set) total += end - start;
  return total;
}

// Length of the intersection of two sorted, disjoint sets: one sweep over both.
double overlap(const Intervals& a, const Intervals& b) {
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double start = std::max(a[i].first, b[j].first);
    const double end = std::min(a[i].second, b[j].second);
    if (end > start) total += end - start;
    (a[i].second < b[j].second ? i : j)++;
  }
  return total;
}

// Per GPU: the communication kernels' time and how much of it other kernels ran alongside.
void summarize_communication(const std::vector<Activity>& activities, TimelineSummary& s) {
  std::map<std::uint32_t, std::pair<Intervals, Intervals>> by_device;  // compute, communication
  for (const auto& a : activities) {
    if (a.kind != ActivityKind::kernel) continue;
    auto& [compute, comm] = by_device[a.device];
    (is_communication(a) ? comm : compute).emplace_back(a.start, a.end);
  }
  double comm_total = 0, hidden = 0;
  int devices = 0;
  for (auto& [device, sets] : by_device) {
    const Intervals comm = merged(std::move(sets.second));
    if (comm.empty()) continue;
    ++devices;
    comm_total += length(comm);
    hidden += overlap(merged(std::move(sets.first)), comm);
  }
  if (devices == 0 || comm_total <= 0) return;
  s.communication_seconds = comm_total / devices;
  s.communication_overlap_fraction = hidden / comm_total;
}

bool on_demand(const Activity& a) {
  return a.kind == ActivityKind::migration && a.cause == "on-demand";
}

// The host side of a copy or migration, which is what sets its bandwidth over the link.
std::string host_memory(const Activity& a) {
  if (a.kind == ActivityKind::migration) return "managed";
  if (a.name == "HtoD") return a.source_memory;
  if (a.name == "DtoH") return a.destination_memory;
  return a.source_memory + "->" + a.destination_memory;
}

std::vector<CopyRate> copy_rates(const std::vector<Activity>& activities) {
  std::map<std::pair<std::string, std::string>, std::pair<CopyRate, Intervals>> groups;
  for (const auto& a : activities) {
    if (a.kind != ActivityKind::copy && a.kind != ActivityKind::migration) continue;
    const std::string memory =
        a.kind == ActivityKind::migration ? host_memory(a) + " (" + a.cause + ")" : host_memory(a);
    auto& [rate, intervals] = groups[{a.name, memory}];
    rate.direction = a.name;
    rate.host_memory = memory;
    rate.bytes += a.bytes;
    rate.count += static_cast<int>(a.records);
    intervals.emplace_back(a.start, a.end);
  }
  std::vector<CopyRate> out;
  for (auto& [key, group] : groups) {
    auto& [rate, intervals] = group;
    rate.busy_seconds = length(merged(std::move(intervals)));
    if (rate.busy_seconds > 0) rate.bandwidth = static_cast<double>(rate.bytes) / rate.busy_seconds;
    out.push_back(rate);
  }
  return out;
}

using U = metrics::Unit;
const std::vector<TimelineFigure> kFigures = {
    {"span_seconds", U::seconds, [](const TimelineSummary& s) { return s.span_seconds; }},
    {"kernel_seconds", U::seconds, [](const TimelineSummary& s) { return s.kernel_seconds; }},
    {"transfer_seconds", U::seconds, [](const TimelineSummary& s) { return s.transfer_seconds; }},
    {"on_demand_seconds", U::seconds, [](const TimelineSummary& s) { return s.on_demand_seconds; }},
    {"overlap_fraction", U::fraction, [](const TimelineSummary& s) { return s.overlap_fraction; }},
    {"exposed_transfer_fraction", U::fraction,
     [](const TimelineSummary& s) { return s.exposed_transfer_fraction; }},
    {"idle_fraction", U::fraction, [](const TimelineSummary& s) { return s.idle_fraction; }},
    {"on_demand_fraction", U::fraction,
     [](const TimelineSummary& s) { return s.on_demand_fraction; }},
    {"migrated_htod_bytes", U::bytes,
     [](const TimelineSummary& s) { return static_cast<double>(s.migrated_htod_bytes); }},
    {"migrated_dtoh_bytes", U::bytes,
     [](const TimelineSummary& s) { return static_cast<double>(s.migrated_dtoh_bytes); }},
};

}  // namespace

const std::vector<TimelineFigure>& timeline_figures() {
  return kFigures;
}

const TimelineFigure* find_timeline_figure(const std::string& name) {
  auto it = std::find_if(kFigures.begin(), kFigures.end(),
                         [&](const TimelineFigure& f) { return name == f.name; });
  return it == kFigures.end() ? nullptr : &*it;
}

bool is_communication(const Activity& a) {
  return a.kind == ActivityKind::kernel && a.name.rfind("nccl", 0) == 0;
}

bool names_devices(const std::vector<Activity>& activities) {
  return std::any_of(activities.begin(), activities.end(),
                     [](const Activity& a) { return a.device != 0; });
}

TimelineRow row_of(const Activity& a) {
  if (a.kind == ActivityKind::migration) return {0, 0, true};
  return {a.device, a.stream, false};
}

bool operator<(const TimelineRow& a, const TimelineRow& b) {
  return std::tie(a.migrations, a.device, a.stream) < std::tie(b.migrations, b.device, b.stream);
}

bool operator==(const TimelineRow& a, const TimelineRow& b) { return !(a < b) && !(b < a); }

std::string row_label(const TimelineRow& row, bool name_devices) {
  if (row.migrations) return "unified memory";
  if (!name_devices) return "stream " + std::to_string(row.stream);
  return "GPU " + std::to_string(row.device) + " · stream " + std::to_string(row.stream);
}

TimelineSummary summarize(const Timeline& timeline) {
  TimelineSummary s;
  const auto& activities = timeline.activities;
  if (activities.empty()) return s;

  Intervals kernels, transfers, faults, all;
  double first = activities.front().start, last = activities.front().end;
  double kernel_total = 0;
  for (const auto& a : activities) {
    first = std::min(first, a.start);
    last = std::max(last, a.end);
    all.emplace_back(a.start, a.end);
    if (a.kind == ActivityKind::kernel) {
      kernels.emplace_back(a.start, a.end);
      kernel_total += a.end - a.start;
      ++s.kernels;
    } else if (on_demand(a)) {
      faults.emplace_back(a.start, a.end);
    } else {
      transfers.emplace_back(a.start, a.end);
    }
    if (a.kind == ActivityKind::copy) ++s.copies;
    if (a.kind == ActivityKind::migration) {
      (a.name == "DtoH" ? s.migrated_dtoh_bytes : s.migrated_htod_bytes) += a.bytes;
      if (on_demand(a)) s.on_demand_bytes += a.bytes;
    }
  }
  kernels = merged(std::move(kernels));
  transfers = merged(std::move(transfers));
  faults = merged(std::move(faults));
  all = merged(std::move(all));

  s.span_seconds = last - first;
  s.kernel_seconds = length(kernels);
  s.transfer_seconds = length(transfers);
  s.on_demand_seconds = length(faults);
  s.busy_seconds = length(all);
  if (s.kernels > 0) s.mean_kernel_seconds = kernel_total / s.kernels;
  if (s.span_seconds > 0) {
    const double together = overlap(kernels, transfers);
    s.overlap_fraction = together / s.span_seconds;
    s.idle_fraction = std::max(0.0, 1.0 - s.busy_seconds / s.span_seconds);
    s.exposed_transfer_fraction = (s.transfer_seconds - together) / s.span_seconds;
    s.on_demand_fraction = s.on_demand_seconds / s.span_seconds;
  }
  s.rates = copy_rates(activities);
  summarize_communication(activities, s);
  return s;
}

void summarize_timelines(Report& report) {
  for (auto& v : report.variants) {
    if (!v.timeline) continue;
    TimelineSummary& s = v.timeline->summary = summarize(*v.timeline);
    const WorkModel& work = report.work_of(v);
    if (work.collective_bytes > 0 && work.ranks > 0 && s.communication_seconds > 0) {
      s.algorithm_bandwidth = work.collective_bytes / s.communication_seconds;
      s.bus_bandwidth = s.algorithm_bandwidth * 2.0 * (work.ranks - 1) / work.ranks;
    }
  }
}

}  // namespace gpulab::report
