// The rule "transfers" of the timeline walk (docs/diagnosis.md): do host-device transfers that no
// kernel overlaps take the time?
#include <algorithm>
#include <optional>

#include "reports/diagnosis/rules/rules.hpp"

namespace gpulab::report::walk::rules {
namespace {

std::optional<double> slowest_host_link(const TimelineSummary& s) {
  std::optional<double> slowest;
  for (const auto& r : s.rates)
    if ((r.direction == "HtoD" || r.direction == "DtoH") && r.bandwidth > 0)
      slowest = std::min(slowest.value_or(r.bandwidth), r.bandwidth);
  return slowest;
}

// Copies that run while kernels run cost nothing extra; those that nothing overlaps add their
// whole length to the time.
Outcome check(const Probe& p) {
  const auto& s = p.timeline().summary;
  const char* name = "transfers.exposed_fraction";
  std::vector<Evidence> ev{
      against(p, "exposed_transfer_fraction", s.exposed_transfer_fraction, ">=", name),
      evidence("overlap_fraction", s.overlap_fraction),
      evidence("slowest_host_link_bandwidth", slowest_host_link(s))};
  if (s.exposed_transfer_fraction < p.threshold(name)) return no(ev);
  return yes(s.exposed_transfer_fraction, ev);
}

}  // namespace

const Rule& transfers() {
  static const Rule rule = [] {
    Rule r;
    r.id = "transfers";
    r.question = "Do host-device transfers that no kernel overlaps take the time?";
    r.expression = "|transfers minus kernels| / span";
    r.finding = {
        "host-device-transfers",
        "Host-device transfers dominate",
        "Copies between host and device take much of the time and do not overlap with kernels; "
        "pageable host memory makes them slower still.",
        "Use pinned host memory, split the data into chunks, and overlap copies with kernels on "
        "several streams; keep data resident on the device between kernels.",
        "transfers that no kernel overlaps under transfers.exposed_fraction of the traced span",
        {"streams"}};
    r.thresholds = {
        {"transfers.exposed_fraction", 0.5, 0, 1,
         "share of a traced variant's time spent in host-device transfers that no kernel overlaps, "
         "from which transfers dominate"}};
    r.quantities = {{"exposed_transfer_fraction", metrics::Unit::fraction},
                    {"overlap_fraction", metrics::Unit::fraction},
                    {"slowest_host_link_bandwidth", metrics::Unit::bytes_per_second}};
    r.check = check;
    r.verdict = "transfer-bound";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
