// The rule "latency" (docs/diagnosis.md): do warps mostly wait on global/local memory results?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {

namespace m = metrics::name;

const Rule& latency() {
  static const Rule rule = [] {
    Rule r;
    r.id = "latency";
    r.question = "Do warps mostly wait on global/local memory results?";
    r.expression = "stall_long_scoreboard / warp_latency";
    r.finding = {
        "latency-bound",
        "Latency-bound: warps wait on memory",
        "Neither DRAM nor the SMs are near their peaks; warps spend their cycles waiting on "
        "global or local memory results, and too little independent work is in flight to hide it.",
        "Put more independent loads in flight per thread (unrolling, vector loads), raise "
        "occupancy, or copy asynchronously (cp.async, TMA) while computing.",
        "long-scoreboard stalls under latency.long_scoreboard_share of the warps' cycles",
        {"async-copy", "vectorize", "occupancy"}};
    r.thresholds = {
        {"latency.long_scoreboard_share", 0.4, 0, 1,
         "share of warp cycles stalled on L1TEX (global/local) results from which the kernel is "
         "latency-bound"}};
    r.quantities = {{"long_scoreboard_share", metrics::Unit::fraction}};
    r.needs = {m::stall_long_scoreboard, m::warp_latency};
    r.check = stall_share(m::stall_long_scoreboard, "long_scoreboard_share",
                          "latency.long_scoreboard_share");
    r.rank = Rank::waiting;
    r.verdict = "latency-bound";
    r.lines = stall_lines("long_scoreboard");
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
