// The rule "sync" (docs/diagnosis.md): do warps wait at barriers?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {

namespace m = metrics::name;

const Rule& sync() {
  static const Rule rule = [] {
    Rule r;
    r.id = "sync";
    r.question = "Do warps wait at barriers?";
    r.expression = "stall_barrier / warp_latency";
    r.finding = {
        "sync-overhead",
        "Synchronization overhead",
        "Warps spend much of their time waiting at barriers (__syncthreads) for the rest of their "
        "block.",
        "Synchronize less often: do more work between barriers, use warp-level primitives "
        "(shuffles) inside a warp, and keep the work balanced between warps.",
        "barrier stalls under sync.barrier_share of the warps' cycles",
        {"reduction"}};
    r.thresholds = {{"sync.barrier_share", 0.3, 0, 1,
                     "share of warp cycles stalled at barriers from which synchronization counts"}};
    r.quantities = {{"barrier_share", metrics::Unit::fraction}};
    r.needs = {m::stall_barrier, m::warp_latency};
    r.check = stall_share(m::stall_barrier, "barrier_share", "sync.barrier_share", true);
    r.lines = stall_lines("barrier");
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
