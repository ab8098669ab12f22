// Diagnoses across a report: which kernels are diagnosed, and every kernel's and timeline's
// diagnosis. The trees themselves are in reports/diagnosis/decision_tree.cpp and
// reports/diagnosis/timeline_diagnosis.cpp; what is asked of their diagnoses, in
// reports/principal.cpp.
#include <algorithm>
#include <map>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/estimates.hpp"
#include "reports/diagnosis/finding_lines.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

// Launches of each function in the variant: of a lab's variant, its launches in one run; of a
// program's function, all of them (profiled or not).
std::map<std::string, std::int64_t> launches_by_function(const Variant& v) {
  std::map<std::string, std::int64_t> out;
  for (const auto& k : v.kernels) ++out[function_key(k)];
  if (v.totals)
    for (auto& [key, n] : out) n = std::max(n, v.totals->launches);
  return out;
}

}  // namespace

void diagnose_report(Report& report, const Thresholds& thresholds, const KernelAsked& asked) {
  const double min_share = thresholds["diagnosis.min_time_share"];
  for (auto& v : report.variants) {
    if (v.status == VariantStatus::skipped) continue;
    const WorkModel* model = v.kernels.size() == 1 ? &report.work_of(v) : nullptr;
    const auto launches = launches_by_function(v);
    for (auto& k : v.kernels) {
      k.diagnosis.reset();
      if (k.metrics.empty()) continue;  // no counters: nothing to walk
      const auto share = function_share(v, k);
      if (share && *share < min_share && !(asked && asked(k))) continue;
      KernelContext c{&k, &v, model, &report.device, launches.at(function_key(k))};
      k.diagnosis = diagnose(c, thresholds);
      if (k.source) attach_lines(*k.diagnosis, *k.source);
      for (auto& f : k.diagnosis->findings) f.estimate = estimate(report, v, f.id);
    }
    if (v.timeline) v.timeline->diagnosis = diagnose_timeline(*v.timeline, thresholds);
  }
}

std::vector<RuleNotEvaluated> rules_not_evaluated(const Report& report) {
  std::vector<RuleNotEvaluated> out;
  for (const auto& rule : kernel_rules()) {
    const auto unevaluated = [&rule](const Kernel& k) {
      return k.diagnosis && std::any_of(k.diagnosis->path.begin(), k.diagnosis->path.end(),
                                        [&rule](const PathStep& s) {
                                          return s.node == rule.node && !s.missing.empty();
                                        });
    };
    const bool any =
        std::any_of(report.variants.begin(), report.variants.end(), [&](const Variant& v) {
          return std::any_of(v.kernels.begin(), v.kernels.end(), unevaluated);
        });
    if (any) out.push_back({&rule, metrics::smallest_set_with(rule.needs)});
  }
  return out;
}

}  // namespace gpulab::report
