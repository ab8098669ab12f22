#include "reports/diagnosis/diagnosis_walk.hpp"

#include <algorithm>
#include <functional>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/report.hpp"

namespace gpulab::report::walk {
namespace {

const char* to_text(Answer a) {
  switch (a) {
    case Answer::yes:
      return "yes";
    case Answer::no:
      return "no";
    case Answer::not_measured:
      return "not measured";
  }
  return "?";
}

const char* severity_label(double score) {
  if (score >= 0.8) return "high";
  if (score >= 0.6) return "medium";
  return "low";
}

Finding make_finding(const FindingTraits& traits, double score, const Outcome& outcome) {
  Finding f;
  f.id = traits.id;
  f.score = score;
  f.severity = severity_label(score);
  f.evidence = outcome.evidence;
  f.detail = outcome.detail;
  f.title = traits.title;
  f.explanation = traits.explanation;
  f.recommendation = traits.recommendation;
  f.false_if = traits.false_if;
  for (const char* lab : traits.labs) f.labs.emplace_back(lab);
  return f;
}

}  // namespace

Outcome yes(double severity, std::vector<Evidence> ev) {
  return {Answer::yes, std::clamp(severity, 0.0, 1.0), std::move(ev)};
}
Outcome no(std::vector<Evidence> ev) { return {Answer::no, 0, std::move(ev)}; }
Outcome not_measured(std::vector<Evidence> ev) { return {Answer::not_measured, 0, std::move(ev)}; }

std::optional<double> Probe::metric(const std::string& name) const {
  if (!kernel_) return std::nullopt;
  const auto& k = *kernel_->kernel;
  if (auto it = k.metrics.find(name); it != k.metrics.end()) return it->second;
  if (auto it = k.derived.find(name); it != k.derived.end()) return it->second;
  return std::nullopt;
}

RuleInfo describe(const Rule& rule, const char* walk) {
  RuleInfo out;
  out.node = rule.id;
  out.finding = rule.finding.id;
  out.needs.assign(rule.needs.begin(), rule.needs.end());
  out.walk = walk;
  out.question = rule.question;
  for (const auto& t : rule.thresholds) out.thresholds.emplace_back(t.name);
  return out;
}

double score_of(const Rule& rule, double severity) {
  return rule.standing_score > 0 ? rule.standing_score : 0.4 + 0.6 * severity;
}

bool is_standing(const Finding& finding) { return finding.score <= kStandingScore + 0.05; }

void record(Diagnosis& out, const Rule& rule, const Outcome& outcome, double min_severity) {
  PathStep step;
  step.node = rule.id;
  step.depth = 1;
  step.question = rule.question;
  step.expression = rule.expression;
  step.evidence = outcome.evidence;
  step.answer = to_text(outcome.answer);
  const bool standing = rule.standing_score > 0;
  if (outcome.answer == Answer::yes && !standing && outcome.severity < min_severity) {
    step.answer = "yes, negligible";  // true, but it costs too little time to report
  } else if (outcome.answer == Answer::yes) {
    step.finding = rule.finding.id;
    out.findings.push_back(make_finding(rule.finding, score_of(rule, outcome.severity), outcome));
  }
  out.path.push_back(std::move(step));
}

void rank(Diagnosis& out, bool roof_leads) {
  auto& f = out.findings;
  std::stable_sort(f.begin(), f.end(),
                   [](const Finding& a, const Finding& b) { return a.score > b.score; });
  if (roof_leads && std::any_of(f.begin(), f.end(), is_standing))
    std::stable_partition(f.begin(), f.end(), is_standing);
  else if (!f.empty() && !is_standing(f.front()))
    f.erase(std::remove_if(f.begin(), f.end(), is_standing), f.end());
}

void apply_declared_ranks(Diagnosis& out, const std::vector<const Rule*>& rules,
                          const std::vector<std::string>& leading) {
  const auto rule_of = [&rules](const Finding& f) -> const Rule* {
    for (const Rule* rule : rules)
      if (f.id == rule->finding.id) return rule;
    return nullptr;
  };
  const auto ranked = [&rule_of](Rank rank) {
    return [&rule_of, rank](const Finding& f) {
      const Rule* rule = rule_of(f);
      return rule && rule->rank == rank;
    };
  };
  auto& f = out.findings;
  std::stable_partition(std::find_if(f.begin(), f.end(), ranked(Rank::waiting)), f.end(),
                        ranked(Rank::cause_of_waiting));
  std::stable_partition(f.begin(), f.end(), std::not_fn(ranked(Rank::after_problems)));
  std::stable_partition(f.begin(), f.end(), [&leading](const Finding& finding) {
    return std::find(leading.begin(), leading.end(), finding.id) != leading.end();
  });
  if (const Rule* principal = f.empty() ? nullptr : rule_of(f.front()))
    if (principal->verdict) out.verdict = principal->verdict;
}

}  // namespace gpulab::report::walk
