// The timeline's part of the diagnosis: where a traced variant's time goes, and whether that is
// a problem with a known remedy. docs/diagnosis.md draws it next to the kernel tree.
#include <algorithm>
#include <array>
#include <string>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/diagnosis_walk.hpp"
#include "reports/diagnosis/rules/rules.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {
namespace {

using namespace walk;

// The root: what takes the largest share of the span.
PathStep classify(const TimelineSummary& s, std::string& verdict) {
  PathStep root;
  root.node = "timeline";
  root.question =
      "What takes the variant's time: kernels, transfers, on-demand migrations, or idle gaps?";
  root.expression = "the largest of kernel, transfer, on-demand and idle time over the span";
  const double span = s.span_seconds > 0 ? s.span_seconds : 1;
  const std::array<std::pair<const char*, double>, 4> shares{{
      {"kernels", s.kernel_seconds / span},
      {"transfers", s.transfer_seconds / span},
      {"on-demand migrations", s.on_demand_seconds / span},
      {"idle", s.idle_fraction},
  }};
  root.evidence = {evidence("kernel_fraction", shares[0].second),
                   evidence("transfer_fraction", shares[1].second),
                   evidence("on_demand_fraction", shares[2].second),
                   evidence("idle_fraction", shares[3].second)};
  if (s.span_seconds <= 0) {
    root.answer = "not measured";
    return root;
  }
  const auto top = std::max_element(shares.begin(), shares.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  root.answer = top->first;
  static const char* const verdicts[] = {"kernel-bound", "transfer-bound", "migration-bound",
                                         "launch-bound"};
  verdict = verdicts[top - shares.begin()];
  return root;
}

}  // namespace

namespace walk {

const Walk& timeline_walk() {
  static const Walk w = [] {
    Walk out;
    out.quantities = {{"kernel_fraction", metrics::Unit::fraction},
                      {"transfer_fraction", metrics::Unit::fraction},
                      {"on_demand_fraction", metrics::Unit::fraction},
                      {"idle_fraction", metrics::Unit::fraction}};
    out.rules = {&rules::transfers(), &rules::um_faults(), &rules::launch_gaps()};
    return out;
  }();
  return w;
}

}  // namespace walk

Diagnosis diagnose_timeline(const Timeline& timeline, const Thresholds& thresholds) {
  Diagnosis out;
  out.thresholds_overridden = thresholds.overridden();
  out.path.push_back(classify(timeline.summary, out.verdict));
  const walk::Probe probe(timeline, thresholds);
  walk::Findings findings;
  for (const walk::Rule* rule : walk::timeline_walk().rules)
    findings.record(out, *rule, rule->check(probe), thresholds["diagnosis.min_severity"]);
  // As in the kernel tree, the verdict follows a principal finding that names the limit: a
  // kernel that faults spans the whole timeline, but it is the migrations it waits on.
  findings.rank_into(out);
  return out;
}

}  // namespace gpulab::report
