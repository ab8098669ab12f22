// The rule "compute-roof" (docs/diagnosis.md): are the SMs near their peak?
#include "reports/diagnosis/rules/rules.hpp"

#include "reports/metric_catalogue.hpp"

namespace gpulab::report::walk::rules {
namespace {

namespace m = metrics::name;

Outcome check(const Probe& p) {
  const auto pct = p.metric(m::sm_pct);
  std::vector<Evidence> ev{against(p, m::sm_pct, pct, ">=", "compute_bound.sm_pct")};
  if (!pct) return not_measured(ev);
  return *pct >= p.threshold("compute_bound.sm_pct") ? yes(0, ev) : no(ev);
}

}  // namespace

const Rule& compute_roof() {
  static const Rule rule = [] {
    Rule r;
    r.id = "compute-roof";
    r.question = "Are the SMs near their peak?";
    r.expression = "sm_pct";
    r.finding = {
        "compute-bound",
        "Compute-bound",
        "The SMs run near their peak throughput: arithmetic, not data movement, limits the kernel.",
        "Use faster instructions (tensor cores, lower precision where acceptable), remove "
        "redundant "
        "arithmetic, or move to a library kernel tuned for the device.",
        "SM throughput under compute_bound.sm_pct of its peak",
        {"matmul"}};
    r.needs = {m::sm_pct};
    r.check = check;
    r.standing_score = kStandingScore + 0.05;
    return r;
  }();
  return rule;
}

}  // namespace gpulab::report::walk::rules
