// The rule "at-roof" (docs/diagnosis.md): are the bytes minimal and the bandwidth near the roof?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

Outcome check(const Probe& p) {
  const auto s = roof_standing(p);
  if (!s.fraction) return not_measured(s.evidence);
  return s.minimal && near_roof(p, s) ? yes(0, s.evidence) : no(s.evidence);
}

}  // namespace

const Rule& at_roof() {
  static const Rule rule = [] {
    Rule r;
    r.id = "at-roof";
    r.question = "Are the bytes minimal and the bandwidth near the roof?";
    r.expression = "dram_over_model and roof_fraction (else dram_pct over the copy roof)";
    r.finding = {
        "memory-bound-at-roof",
        "Memory-bound at the bandwidth roof",
        "The kernel moves about the bytes its work needs, at close to the bandwidth the device "
        "reaches: it is as fast as its data movement allows.",
        "Only moving fewer bytes helps now: fuse with neighbouring kernels, use smaller data "
        "types, "
        "or compress.",
        "DRAM bytes above at_roof.dram_over_model of the work model, or the effective bandwidth "
        "(DRAM "
        "bandwidth without a model) under at_roof.roof_fraction of the copy roof",
        {"transpose", "vectorize"}};
    r.thresholds = {
        {"at_roof.dram_over_model", 1.15, 0, 1e6,
         "most DRAM bytes per work-model byte for the bytes to count as already minimal"},
        {"at_roof.roof_fraction", 0.87, 0, 1,
         "effective bandwidth over the measured copy roof (without a work model, DRAM bandwidth "
         "over "
         "it) from which a memory-bound kernel is at the roof; below it, it is below the roof"},
        {"at_roof.dram_pct", 77, 0, 100,
         "DRAM throughput, % of peak, that counts as at the roof for a kernel without a work model "
         "in a report without a measured copy roof"}};
    r.quantities = {{"roof_fraction", metrics::Unit::fraction},
                    {"dram_over_copy_roof", metrics::Unit::fraction}};
    r.needs = {m::dram_read, m::dram_write, m::dram_pct};
    r.check = check;
    r.standing_score = kStandingScore;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
