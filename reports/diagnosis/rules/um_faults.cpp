// The rule "um-faults" of the timeline walk (docs/diagnosis.md): does the GPU wait on pages
// migrated on demand?
#include <optional>

#include "reports/diagnosis/rules/rules.hpp"

namespace gpulab::report::walk::rules {
namespace {

// A kernel that faults waits while the driver migrates the pages it touched, a few at a time.
Outcome check(const Probe& p) {
  const auto& s = p.timeline().summary;
  const auto& um = p.timeline().unified_memory;
  const char* name = "um_faults.on_demand_fraction";
  std::vector<Evidence> ev{
      against(p, "on_demand_fraction",
              um.available ? std::optional(s.on_demand_fraction) : std::nullopt, ">=", name),
      evidence("on_demand_bytes",
               um.available ? std::optional<double>(s.on_demand_bytes) : std::nullopt),
      evidence("gpu_page_faults",
               um.gpu_page_faults ? std::optional<double>(*um.gpu_page_faults) : std::nullopt)};
  if (!um.available) return not_measured(ev);
  if (s.on_demand_fraction < p.threshold(name)) return no(ev);
  return yes(s.on_demand_fraction, ev);
}

}  // namespace

const Rule& um_faults() {
  static const Rule rule = [] {
    Rule r;
    r.id = "um-faults";
    r.question = "Does the GPU wait on pages migrated on demand?";
    r.expression = "on-demand migration time / span";
    r.finding = {
        "um-page-faults",
        "Unified-memory page faults",
        "Managed memory first touched on the host migrates page by page on demand when the GPU "
        "faults on it, stalling the kernel.",
        "Prefetch with cudaMemPrefetchAsync before the kernel, give access hints "
        "(cudaMemAdvise), or use explicit device allocations and copies.",
        "on-demand migrations under um_faults.on_demand_fraction of the traced span",
        {"unified-memory"}};
    r.thresholds = {
        {"um_faults.on_demand_fraction", 0.1, 0, 1,
         "share of a traced variant's time spent migrating pages on demand (after GPU page "
         "faults), from which faults count"}};
    r.quantities = {{"on_demand_bytes", metrics::Unit::bytes},
                    {"gpu_page_faults", metrics::Unit::count}};
    r.check = check;
    r.verdict = "migration-bound";
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
