#include "reports/diagnosis/expectations.hpp"

#include <algorithm>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

Expectation expectation(const std::map<std::string, Expectation>& expected,
                        const std::string& variant) {
  const auto it = expected.find(variant);
  return it == expected.end() ? Expectation() : it->second;
}

std::string judge(const Report& r, const Variant& v, const Expectation& expected,
                  const std::string& principal, const std::map<std::string, Expectation>& all) {
  if (v.status == VariantStatus::skipped) return "skipped";
  if (v.check.status == CheckStatus::failed) return "FAIL (check)";
  if (!has_diagnosis(v)) return "FAIL (no counters)";
  if (!expected.empty() && !expected.accepts(principal)) return "FAIL";
  const Variant* base = r.baseline_of(v);
  if (base && base != &v) {
    for (const auto& left_behind : expectation(all, base->name).any_of)
      if (!contains(expected.any_of, left_behind) && carries_finding(v, left_behind))
        return "FAIL (still " + left_behind + ")";
  }
  return expected.empty() ? "pass (no expectation)" : "pass";
}

// The steps of the path that gave `principal`, or refused an expected finding: of the
// diagnosis whose principal finding is the variant's, else of its first.
std::vector<PathStep> deciding_steps(const Variant& v, const std::string& principal,
                                     const Expectation& expected) {
  const auto diagnoses = diagnoses_of(v);
  if (diagnoses.empty()) return {};
  const Diagnosis* d = diagnoses.front();
  for (const auto* one : diagnoses)
    if (!principal.empty() && !one->findings.empty() && one->findings.front().id == principal) {
      d = one;
      break;
    }
  std::vector<std::string> nodes;
  for (const auto& f : expected.any_of) nodes.push_back(node_of_finding(f));
  std::vector<PathStep> steps;
  for (const auto& step : d->path)
    if ((!principal.empty() && step.finding == principal) || contains(nodes, step.node))
      steps.push_back(step);
  return steps;
}

}  // namespace

std::vector<Judgement> judge_findings(const Report& report,
                                      const std::map<std::string, Expectation>& expected) {
  std::vector<Judgement> out;
  for (const auto& v : report.variants) {
    Judgement& j = out.emplace_back();
    j.variant = v.name;
    j.expected = expectation(expected, v.name);
    j.obtained = principal_finding(v);
    j.result = judge(report, v, j.expected, j.obtained, expected);
    j.failed = j.result.rfind("FAIL", 0) == 0;
    if (j.failed) j.decided_by = deciding_steps(v, j.obtained, j.expected);
  }
  return out;
}

}  // namespace gpulab::report
