// The rule "shared-banks" (docs/diagnosis.md): do shared-memory accesses conflict on banks?
#include "reports/diagnosis/rules/rules.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

// Bank conflicts cost time only where warps wait on the shared-memory pipe: for its queue
// (mio_throttle) or for its results (short_scoreboard). Where the stall reasons are measured,
// that share of the warps' cycles must reach shared_banks.stall_share and bounds the severity:
// CUB's histogram sweep has 2.6 excess wavefronts per shared atomic and waits on shared memory
// 12% of its cycles (the per-sample arithmetic sets its time), and the lab's interleaved
// reduction runs faster with its conflicts than its padded variant without them
// (docs/thresholds.md).
Outcome check(const Probe& p) {
  const auto excess = p.metric(d::shared_excess_wavefronts);
  const auto ld = p.metric(m::shld_inst), st = p.metric(m::shst_inst);
  const double atomics = p.metric(m::shatom_inst).value_or(0);  // the full set only
  const std::string t = "shared_banks.excess_per_inst";
  std::optional<double> per_inst;
  if (excess && ld && st && *ld + *st + atomics > 0) per_inst = *excess / (*ld + *st + atomics);
  std::vector<Evidence> ev{
      evidence(d::shld_wavefronts_per_inst, p.metric(d::shld_wavefronts_per_inst)),
      evidence(d::shared_excess_wavefronts, excess),
      against(p, "excess_wavefronts_per_inst", per_inst, ">=", t)};
  if (!excess || !ld || !st) return not_measured(ev);
  if (!per_inst || *per_inst < p.threshold(t)) return no(ev);
  double severity = *per_inst / (*per_inst + 1.0);  // share of wavefronts that are excess
  const auto queue = stall_fraction(p, m::stall_mio_throttle);
  const auto results = stall_fraction(p, m::stall_short_scoreboard);
  if (queue && results) {  // the stall reasons are measured (the stalls and full sets)
    const double waiting = *queue + *results;
    ev.push_back(against(p, "shared_wait_share", waiting, ">=", "shared_banks.stall_share"));
    if (waiting < p.threshold("shared_banks.stall_share")) return no(ev);
    severity = std::min(severity, waiting);
  }
  return yes(severity, ev);
}

}  // namespace

const Rule& shared_banks() {
  static const Rule rule = [] {
    Rule r;
    r.id = "shared-banks";
    r.question = "Do shared-memory accesses conflict on banks?";
    r.expression =
        "shared_excess_wavefronts / (shld_inst + shst_inst + shatom_inst); "
        "(stall_mio_throttle + stall_short_scoreboard) / warp_latency";
    r.finding = {
        "shared-bank-conflicts",
        "Shared-memory bank conflicts",
        "Threads of a warp hit different words in the same shared-memory bank, so the access is "
        "split into several wavefronts that the shared-memory pipe serves one after another.",
        "Pad shared arrays (one extra word per row) or swizzle the index (XOR with the row) so a "
        "warp's accesses spread over all 32 banks; prefer sequential addressing in reductions.",
        "excess shared-memory wavefronts under shared_banks.excess_per_inst per instruction, or "
        "waits on the shared-memory pipe under shared_banks.stall_share of the warps' cycles",
        {"transpose", "reduction"}};
    r.thresholds = {
        {"shared_banks.excess_per_inst", 0.5, 0, 1e6,
         "shared-memory wavefronts beyond one per instruction, per instruction, from which bank "
         "conflicts count"},
        {"shared_banks.stall_share", 0.2, 0, 1,
         "share of warp cycles waiting on the shared-memory pipe (mio_throttle + short_scoreboard) "
         "from which bank conflicts count, where the stall reasons are measured"}};
    r.quantities = {{"excess_wavefronts_per_inst", metrics::Unit::ratio},
                    {"shared_wait_share", metrics::Unit::fraction}};
    r.needs = {m::shld_wavefronts, m::shst_wavefronts, m::shld_inst, m::shst_inst};
    r.check = check;
    r.lines = LineMeasure{"the shared-memory wavefronts beyond one per request",
                          [](const std::map<std::string, double>& c) {
                            return std::max(0.0, counted(c, source_counter::shared_wavefronts) -
                                                     counted(c, source_counter::shared_requests));
                          },
                          [](const LineFigures& f) {
                            return f.wavefronts_per_shared_request
                                       ? fmt::format("{:.1f} wavefronts per request",
                                                     *f.wavefronts_per_shared_request)
                                       : std::string();
                          }};
    // Not calibrated: no lab pair yet (docs/estimates.md).
    r.estimate_model = "roof";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
