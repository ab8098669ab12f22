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

bool is_standing(const Rule& rule) { return rule.standing_score > 0; }

bool Findings::record(Diagnosis& out, const Rule& rule, const Outcome& outcome,
                      double min_severity) {
  PathStep step;
  step.node = rule.id;
  step.depth = 1;
  step.question = rule.question;
  step.expression = rule.expression;
  step.evidence = outcome.evidence;
  step.answer = to_text(outcome.answer);
  const bool kept =
      outcome.answer == Answer::yes && (is_standing(rule) || outcome.severity >= min_severity);
  if (kept) {
    step.finding = rule.finding.id;
    found_.push_back({make_finding(rule.finding, score_of(rule, outcome.severity), outcome), &rule,
                      outcome.leads});
  } else if (outcome.answer == Answer::yes) {
    step.answer = "yes, negligible";  // true, but it costs too little time to report
  }
  out.path.push_back(std::move(step));
  return kept;
}

void Findings::rank_into(Diagnosis& out, bool roof_leads, std::size_t most) {
  auto& f = found_;
  const auto standing = [](const Found& x) { return is_standing(*x.rule); };
  const auto ranked = [](Rank rank) {
    return [rank](const Found& x) { return x.rule->rank == rank; };
  };
  std::stable_sort(f.begin(), f.end(), [](const Found& a, const Found& b) {
    return a.finding.score > b.finding.score;
  });
  if (roof_leads && std::any_of(f.begin(), f.end(), standing))
    std::stable_partition(f.begin(), f.end(), standing);
  else if (!f.empty() && !standing(f.front()))
    f.erase(std::remove_if(f.begin(), f.end(), standing), f.end());
  std::stable_partition(std::find_if(f.begin(), f.end(), ranked(Rank::waiting)), f.end(),
                        ranked(Rank::cause_of_waiting));
  std::stable_partition(f.begin(), f.end(), std::not_fn(ranked(Rank::after_problems)));
  std::stable_partition(f.begin(), f.end(), [](const Found& x) { return x.leads; });
  if (!f.empty() && f.front().rule->verdict) out.verdict = f.front().rule->verdict;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (most == 0 || i < most) {
      out.findings.push_back(std::move(f[i].finding));
      continue;
    }
    // True and costly enough, but past the findings a reader acts on: its node says so.
    for (auto& step : out.path)
      if (step.node == f[i].rule->id && step.finding == f[i].finding.id) {
        step.answer = "yes, ranked out";
        step.finding.clear();
      }
  }
  f.clear();
}

}  // namespace gpulab::report::walk
