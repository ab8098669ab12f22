// The timeline's part of the diagnosis: where a traced variant's time goes, and whether that is
// a problem with a known remedy. docs/diagnosis.md draws it next to the kernel tree.
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {
namespace {

using namespace walk;

std::optional<double> slowest_host_link(const TimelineSummary& s) {
  std::optional<double> slowest;
  for (const auto& r : s.rates)
    if ((r.direction == "HtoD" || r.direction == "DtoH") && r.bandwidth > 0)
      slowest = std::min(slowest.value_or(r.bandwidth), r.bandwidth);
  return slowest;
}

// Copies that run while kernels run cost nothing extra; those that nothing overlaps add their
// whole length to the time.
Outcome transfers(const TimelineSummary& s, const Thresholds& t) {
  const char* name = "transfers.exposed_fraction";
  std::vector<Evidence> ev{
      evidence("exposed_transfer_fraction", s.exposed_transfer_fraction, ">=", name, t[name]),
      evidence("overlap_fraction", s.overlap_fraction),
      evidence("slowest_host_link_bandwidth", slowest_host_link(s))};
  if (s.exposed_transfer_fraction < t[name]) return no(ev);
  return yes(s.exposed_transfer_fraction, ev);
}

// A kernel that faults waits while the driver migrates the pages it touched, a few at a time.
Outcome um_faults(const Timeline& timeline, const Thresholds& t) {
  const auto& s = timeline.summary;
  const auto& um = timeline.unified_memory;
  const char* name = "um_faults.on_demand_fraction";
  std::vector<Evidence> ev{
      evidence("on_demand_fraction",
               um.available ? std::optional(s.on_demand_fraction) : std::nullopt, ">=", name,
               t[name]),
      evidence("on_demand_bytes",
               um.available ? std::optional<double>(s.on_demand_bytes) : std::nullopt),
      evidence("gpu_page_faults",
               um.gpu_page_faults ? std::optional<double>(*um.gpu_page_faults) : std::nullopt)};
  if (!um.available) return not_measured(ev);
  if (s.on_demand_fraction < t[name]) return no(ev);
  return yes(s.on_demand_fraction, ev);
}

// Idle time between kernels that are as short as a launch is time spent launching.
Outcome launch_gaps(const TimelineSummary& s, const Thresholds& t) {
  const char* idle = "launch_gaps.idle_fraction";
  const char* duration = "launch.duration_s";
  std::vector<Evidence> ev{evidence("idle_fraction", s.idle_fraction, ">=", idle, t[idle]),
                           evidence("mean_kernel_seconds",
                                    s.kernels ? std::optional(s.mean_kernel_seconds) : std::nullopt,
                                    "<", duration, t[duration]),
                           evidence("kernels", s.kernels)};
  // One kernel has no gaps between kernels: the question has its answer.
  if (s.kernels < 2 || s.idle_fraction < t[idle] || s.mean_kernel_seconds >= t[duration])
    return no(ev);
  return yes(s.idle_fraction, ev);
}

const NodeInfo kTransfers{"transfers",
                          "Do host-device transfers that no kernel overlaps take the time?",
                          "|transfers minus kernels| / span", "host-device-transfers"};
const NodeInfo kUmFaults{"um-faults", "Does the GPU wait on pages migrated on demand?",
                         "on-demand migration time / span", "um-page-faults"};
const NodeInfo kLaunchGaps{"launch-gaps", "Does the GPU idle between kernels as short as a launch?",
                           "idle time / span, with mean kernel duration < launch.duration_s",
                           "launch-overhead"};

// The root: what takes the largest share of the span.
PathStep classify(const TimelineSummary& s, std::string& verdict) {
  PathStep root;
  root.node = "timeline";
  root.question =
      "What takes the variant's time: kernels, transfers, on-demand migrations, or idle gaps?";
  root.expression = "the largest of kernel, transfer, on-demand and idle time over the span";
  const double span = s.span_seconds > 0 ? s.span_seconds : 1;
  const std::array<std::pair<const char*, double>, 4> shares{{
      {"kernels", s.kernel_seconds / span},
      {"transfers", s.transfer_seconds / span},
      {"on-demand migrations", s.on_demand_seconds / span},
      {"idle", s.idle_fraction},
  }};
  root.evidence = {evidence("kernel_fraction", shares[0].second),
                   evidence("transfer_fraction", shares[1].second),
                   evidence("on_demand_fraction", shares[2].second),
                   evidence("idle_fraction", shares[3].second)};
  if (s.span_seconds <= 0) {
    root.answer = "not measured";
    return root;
  }
  const auto top = std::max_element(shares.begin(), shares.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  root.answer = top->first;
  static const char* const verdicts[] = {"kernel-bound", "transfer-bound", "migration-bound",
                                         "launch-bound"};
  verdict = verdicts[top - shares.begin()];
  return root;
}

}  // namespace

Diagnosis diagnose_timeline(const Timeline& timeline, const Thresholds& thresholds) {
  const auto& s = timeline.summary;
  Diagnosis out;
  out.thresholds_overridden = thresholds.overridden();
  out.path.push_back(classify(s, out.verdict));
  const double min_severity = thresholds["diagnosis.min_severity"];
  record(out, kTransfers, transfers(s, thresholds), min_severity);
  record(out, kUmFaults, um_faults(timeline, thresholds), min_severity);
  record(out, kLaunchGaps, launch_gaps(s, thresholds), min_severity);
  rank(out);
  // As in the kernel tree, the verdict follows a principal finding that names the limit: a
  // kernel that faults spans the whole timeline, but it is the migrations it waits on.
  static const std::map<std::string, const char*> verdict_of = {
      {"host-device-transfers", "transfer-bound"},
      {"um-page-faults", "migration-bound"},
      {"launch-overhead", "launch-bound"}};
  if (!out.findings.empty()) out.verdict = verdict_of.at(out.findings.front().id);
  return out;
}

}  // namespace gpulab::report
