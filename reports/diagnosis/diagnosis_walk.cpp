#include "reports/diagnosis/diagnosis_walk.hpp"

#include <algorithm>

#include "reports/diagnosis/diagnosis.hpp"

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

Finding make_finding(const std::string& id, double score, const Outcome& outcome) {
  Finding f;
  f.id = id;
  f.score = score;
  f.severity = severity_label(score);
  f.evidence = outcome.evidence;
  f.detail = outcome.detail;
  if (const auto* traits = find_finding(id)) {
    f.title = traits->title;
    f.explanation = traits->explanation;
    f.recommendation = traits->recommendation;
    f.false_if = traits->false_if;
    for (const char* lab : traits->labs) f.labs.emplace_back(lab);
  }
  return f;
}

}  // namespace

Outcome yes(double severity, std::vector<Evidence> ev) {
  return {Answer::yes, std::clamp(severity, 0.0, 1.0), std::move(ev)};
}
Outcome no(std::vector<Evidence> ev) { return {Answer::no, 0, std::move(ev)}; }
Outcome not_measured(std::vector<Evidence> ev) { return {Answer::not_measured, 0, std::move(ev)}; }

double score_of(const NodeInfo& node, double severity) {
  return node.standing_score > 0 ? node.standing_score : 0.4 + 0.6 * severity;
}

bool is_standing(const Finding& finding) { return finding.score <= kStandingScore + 0.05; }

void record(Diagnosis& out, const NodeInfo& node, const Outcome& outcome, double min_severity) {
  PathStep step;
  step.node = node.id;
  step.depth = 1;
  step.question = node.question;
  step.expression = node.expression;
  step.evidence = outcome.evidence;
  step.answer = to_text(outcome.answer);
  const bool standing = node.standing_score > 0;
  if (outcome.answer == Answer::yes && !standing && outcome.severity < min_severity) {
    step.answer = "yes, negligible";  // true, but it costs too little time to report
  } else if (outcome.answer == Answer::yes) {
    step.finding = node.finding;
    out.findings.push_back(make_finding(node.finding, score_of(node, outcome.severity), outcome));
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

}  // namespace gpulab::report::walk
