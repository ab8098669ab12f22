// The rule "below-roof" (docs/diagnosis.md): are the bytes minimal but the bandwidth short of the
// roof?
#include "reports/diagnosis/rules/rules.hpp"

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

// What keeps a memory-bound kernel with minimal bytes off the roof, from the counters at hand.
// By Little's law an SM sustains its share of the roof only with latency x bandwidth / SMs bytes
// outstanding, and four things hold fewer in flight: few resident warps, a partial last wave,
// barriers between load phases and too few or too narrow loads per warp. The first two are
// judged against the occupancy and tail thresholds; otherwise the bytes in flight are named,
// with the stall shares that say where the warps' time goes.
std::string roof_gap(const Probe& p, std::optional<double> achieved, std::optional<double> waves,
                     std::optional<double> memory_wait, std::optional<double> barrier_wait,
                     std::optional<double> bytes_per_request) {
  const auto& c = p.context();
  if (achieved && *achieved <= p.threshold("occupancy.achieved")) {
    const std::string limit = occupancy_detail(c.kernel->attributes, c.device, *achieved);
    return fmt::format("too few warps to keep bytes in flight: {:.0f}% achieved occupancy{}",
                       100 * *achieved, limit.empty() ? "" : ", " + limit);
  }
  if (waves && *waves > p.threshold("tail.min_waves") && *waves <= p.threshold("tail.max_waves") &&
      idle_last_wave(*waves) >= p.threshold("tail.idle_fraction"))
    return fmt::format("a partial last wave: {:.2f} waves leave {:.0f}% of the SMs' time idle",
                       *waves, 100 * idle_last_wave(*waves));
  std::string out = "too few bytes in flight per SM";
  if (bytes_per_request)
    out += fmt::format(" ({:.0f} B per global load request, {:.0f} B per thread)",
                       *bytes_per_request, *bytes_per_request / 32);
  if (memory_wait || barrier_wait) {
    out += ": warps wait";
    if (memory_wait) out += fmt::format(" on memory results {:.0f}%", 100 * *memory_wait);
    if (memory_wait && barrier_wait) out += " and";
    if (barrier_wait) out += fmt::format(" at barriers {:.0f}%", 100 * *barrier_wait);
    out += " of their cycles";
  }
  if (achieved) out += fmt::format(", with {:.0f}% achieved occupancy", 100 * *achieved);
  return out;
}

// The complement of at-roof on the bandwidth axis: bytes as minimal (or no model to judge them),
// DRAM the busiest unit (the memory branch), and the bandwidth under at_roof.roof_fraction of the
// copy roof. The severity is the share of the time the gap to the roof costs, 1 - fraction.
Outcome check(const Probe& p) {
  const auto s = roof_standing(p);
  const auto& c = p.context();
  const auto achieved = p.metric(d::achieved_occupancy);
  const auto waves = waves_of(c);
  const auto memory_wait = stall_fraction(p, m::stall_long_scoreboard);
  const auto barrier_wait = stall_fraction(p, m::stall_barrier);
  std::optional<double> bytes_per_request;
  const auto bytes = p.metric(m::gld_bytes_requested), requests = p.metric(m::gld_requests);
  if (bytes && requests && *requests > 0) bytes_per_request = *bytes / *requests;
  std::vector<Evidence> ev = s.evidence;
  ev.push_back(evidence(d::achieved_occupancy, achieved));
  ev.push_back(evidence("waves", waves));
  ev.push_back(evidence("long_scoreboard_share", memory_wait));
  ev.push_back(evidence("barrier_share", barrier_wait));
  ev.push_back(evidence("load_bytes_per_request", bytes_per_request));
  if (!s.fraction) return not_measured(ev);
  if (!s.minimal || near_roof(p, s)) return no(ev);
  Outcome out = yes(1.0 - *s.fraction, ev);
  out.detail = roof_gap(p, achieved, waves, memory_wait, barrier_wait, bytes_per_request);
  return out;
}

}  // namespace

const Rule& below_roof() {
  static const Rule rule = [] {
    Rule r;
    r.id = "below-roof";
    r.question = "Are the bytes minimal but the bandwidth short of the roof?";
    r.expression = "dram_over_model and roof_fraction (else dram_pct over the copy roof)";
    r.finding = {
        "memory-bound-below-roof",
        "Memory-bound below the bandwidth roof",
        "DRAM is the busiest unit and the kernel moves about the bytes its work needs, but slower "
        "than the device can move them. By Little's law an SM sustains its share of the roof only "
        "with latency x bandwidth / SMs bytes outstanding (~23 KB on an H200); few resident warps, "
        "a "
        "partial last wave, barriers between load phases and too few or too narrow loads per "
        "thread "
        "each keep fewer in flight. Its cause names the one the counters show.",
        "Keep more bytes in flight per SM: issue several independent loads per thread before using "
        "any (unroll), use 16-byte accesses, move more data per block between barriers, keep "
        "occupancy up, and size the grid in full waves.",
        "DRAM bytes above at_roof.dram_over_model of the work model, or the bandwidth at "
        "at_roof.roof_fraction of the copy roof or above (then it is at the roof)",
        {"transpose", "vectorize"}};
    r.quantities = {{"load_bytes_per_request", metrics::Unit::bytes}};
    r.needs = {m::dram_read, m::dram_write, m::dram_pct};
    r.check = check;
    r.rank = Rank::after_problems;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
