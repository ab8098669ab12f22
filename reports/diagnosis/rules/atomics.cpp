// The rule "atomics" (docs/diagnosis.md): do global atomics contend?
#include "reports/diagnosis/rules/rules.hpp"

#include <algorithm>

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

// Contention is serialization where the updates land: the atomic unit of the L2 slice that holds
// a contended address is busy while the other slices' are not. Where that is measured, the
// busiest slice's share of the elapsed time is the answer and the cost; otherwise the number of
// atomics per load request stands in for it (frequent atomics, contended or not).
Outcome check(const Probe& p) {
  const auto atom = p.metric(m::atom_requests), red = p.metric(m::red_requests);
  const auto loads = p.metric(m::gld_requests);
  const auto busiest = p.metric(m::l2_atomic_busiest_pct);
  const auto tma = tma_bytes(p);
  std::optional<double> ratio;
  // TMA loads count as the 128-byte requests that would move their bytes.
  if (atom && red && loads)
    ratio = (*atom + *red) / std::max(*loads + tma.value_or(0) / 128.0, 1.0);
  std::vector<Evidence> ev{evidence(m::atom_requests, atom), evidence(m::red_requests, red)};
  if (busiest) {
    const std::string t = "atomics.l2_slice_busy_pct";
    ev.push_back(evidence(m::l2_atomic_pct, p.metric(m::l2_atomic_pct)));
    ev.push_back(against(p, m::l2_atomic_busiest_pct, busiest, ">=", t));
    return *busiest >= p.threshold(t) ? yes(*busiest / 100.0, ev) : no(ev);
  }
  const std::string t = "atomics.per_load_request";
  ev.push_back(evidence("tma_bytes", tma));
  ev.push_back(against(p, "atomics_per_load_request", ratio, ">=", t));
  if (!ratio) return not_measured(ev);
  return *ratio >= p.threshold(t) ? yes(*ratio / (*ratio + 1.0), ev) : no(ev);
}

}  // namespace

const Rule& atomics() {
  static const Rule rule = [] {
    Rule r;
    r.id = "atomics";
    r.question = "Do global atomics contend?";
    r.expression =
        "l2_atomic_busiest_pct, else (atom_requests + red_requests) / "
        "gld_requests";
    r.finding = {
        "atomic-contention",
        "Atomic contention",
        "Many threads update the same address atomically; the updates are serialized at L2.",
        "Aggregate first: reduce within the warp (shuffles) and the block (shared memory), then "
        "issue one atomic per block.",
        "the busiest L2 slice's atomic unit active under atomics.l2_slice_busy_pct of the time "
        "(without that counter: global atomics under atomics.per_load_request per global load "
        "request)",
        {"atomics", "reduction"}};
    r.thresholds = {
        {"atomics.per_load_request", 0.5, 0, 1e6,
         "global atomic requests per global load request from which atomics contend, where the L2 "
         "slices' atomic units are not measured"},
        {"atomics.l2_slice_busy_pct", 50, 0, 100,
         "% of the elapsed cycles the busiest L2 slice's atomic unit is active, from which atomics "
         "contend"}};
    r.quantities = {{"atomics_per_load_request", metrics::Unit::ratio}};
    r.needs = {m::atom_requests, m::red_requests, m::gld_requests};
    r.check = check;
    r.rank = Rank::cause_of_waiting;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
