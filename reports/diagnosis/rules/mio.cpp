// The rule "mio" (docs/diagnosis.md): do warps wait on the MIO queue (shared memory, constant
// cache)?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {

namespace m = metrics::name;

const Rule& mio() {
  static const Rule rule = [] {
    Rule r;
    r.id = "mio";
    r.question = "Do warps wait on the MIO queue (shared memory, constant cache)?";
    r.expression = "stall_mio_throttle / warp_latency";
    r.finding = {
        "mio-throttle",
        "MIO queue pressure (shared memory, constant cache, special functions)",
        "Warps wait for the memory-input/output queue that serves shared memory, the constant "
        "cache and special functions: too many such instructions, or each split into many "
        "passes (constant reads with a different address per thread are served one address at a "
        "time; shared-memory accesses with bank conflicts take several wavefronts).",
        "Give constant reads one address per warp (index by warp, not by thread) or move the "
        "table to global memory; remove bank conflicts; keep reused values in registers.",
        "MIO-throttle stalls under mio.throttle_share of the warps' cycles",
        {"constant-memory", "transpose", "reduction"}};
    r.thresholds = {
        {"mio.throttle_share", 0.5, 0, 1,
         "share of warp cycles stalled on a full MIO queue (shared memory, constant cache, special "
         "functions) from which it dominates"}};
    r.quantities = {{"mio_throttle_share", metrics::Unit::fraction}};
    r.needs = {m::stall_mio_throttle, m::warp_latency};
    r.check = stall_share(m::stall_mio_throttle, "mio_throttle_share", "mio.throttle_share");
    r.lines = stall_lines("mio_throttle");
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
