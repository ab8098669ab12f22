#include "reports/expectations.hpp"

#include "reports/diagnosis.hpp"

namespace gpulab::report {
namespace {

std::string expectation(const std::map<std::string, std::string>& expected, const std::string& variant) {
  const auto it = expected.find(variant);
  return it == expected.end() ? "" : it->second;
}

std::string judge(const Report& r, const Variant& v, const std::string& expected,
                  const std::string& principal, const std::map<std::string, std::string>& all) {
  if (v.status == VariantStatus::skipped) return "skipped";
  if (v.check.status == CheckStatus::failed) return "FAIL (check)";
  if (!has_diagnosis(v)) return "FAIL (no counters)";
  if (!expected.empty() && principal != expected) return "FAIL";
  const Variant* base = r.baseline_of(v);
  if (base && base != &v) {
    const std::string left_behind = expectation(all, base->name);
    if (!left_behind.empty() && left_behind != expected && carries_finding(v, left_behind))
      return "FAIL (still " + left_behind + ")";
  }
  return expected.empty() ? "pass (no expectation)" : "pass";
}

}  // namespace

std::vector<Judgement> judge_findings(const Report& report,
                                      const std::map<std::string, std::string>& expected) {
  std::vector<Judgement> out;
  for (const auto& v : report.variants) {
    Judgement& j = out.emplace_back();
    j.variant = v.name;
    j.expected = expectation(expected, v.name);
    j.obtained = principal_finding(v);
    j.result = judge(report, v, j.expected, j.obtained, expected);
    j.failed = j.result.rfind("FAIL", 0) == 0;
  }
  return out;
}

}  // namespace gpulab::report
