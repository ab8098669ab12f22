// The rule "local" (docs/diagnosis.md): is there local-memory traffic (spills, local arrays)?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/derived.hpp"
#include "reports/diagnosis/rules/readings.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;
namespace d = derived;

Outcome check(const Probe& p) {
  const auto local = p.metric(d::local_bytes);
  const auto ld = p.metric(m::gld_sectors), st = p.metric(m::gst_sectors);
  const auto tma = tma_bytes(p);
  const std::string t = "local.fraction";
  std::optional<double> fraction;
  if (local && ld && st) {
    const double global = 32.0 * (*ld + *st) + tma.value_or(0);
    fraction = global > 0 ? *local / global : (*local > 0 ? 1.0 : 0.0);
  }
  std::vector<Evidence> ev{evidence(d::local_bytes, local), evidence("tma_bytes", tma),
                           against(p, "local_over_global_bytes", fraction, ">=", t)};
  if (!fraction) return not_measured(ev);
  if (*fraction < p.threshold(t)) return no(ev);
  return yes(*fraction / (*fraction + 1.0), ev);
}

}  // namespace

const Rule& local_memory() {
  static const Rule rule = [] {
    Rule r;
    r.id = "local";
    r.question = "Is there local-memory traffic (spills, local arrays)?";
    r.expression = "local_bytes / (32 x (gld_sectors + gst_sectors) + tma_bytes)";
    r.finding = {
        "local-memory",
        "Local-memory traffic (spills or local arrays)",
        "Per-thread data lives in local memory, which is device memory cached in L1/L2: register "
        "spills or arrays indexed at run time turn register accesses into memory traffic.",
        "Index per-thread arrays with compile-time constants (unroll), reduce live values, or "
        "relax "
        "register caps (__launch_bounds__, -maxrregcount) that force spills.",
        "local-memory bytes under local.fraction of the global traffic",
        {"spill"}};
    r.thresholds = {
        {"local.fraction", 0.05, 0, 1e6,
         "local-memory bytes per byte of global-memory traffic from which local memory counts"}};
    r.quantities = {{"local_over_global_bytes", metrics::Unit::ratio},
                    {"tma_bytes", metrics::Unit::bytes}};
    r.needs = {m::local_ld_bytes, m::local_st_bytes, m::gld_sectors, m::gst_sectors};
    r.check = check;
    r.rank = Rank::cause_of_waiting;
    // Not calibrated: off by up to x10 on the labs: a spilling kernel, fixed, is bound by its
    // instructions, not its bytes (docs/estimates.md).
    r.estimate_model = "roof";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
