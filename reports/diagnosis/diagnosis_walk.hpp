// The pieces both diagnosis walks share, the kernel's (reports/diagnosis/decision_tree.cpp) and the
// timeline's (reports/diagnosis/timeline_diagnosis.cpp): what a node answers, how an answer becomes
// a step of the path and perhaps a finding, and how findings are ranked.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/diagnosis_model.hpp"

namespace gpulab::report::walk {

enum class Answer { yes, no, not_measured };

// What evaluating one check node produced.
struct Outcome {
  Answer answer = Answer::not_measured;
  double severity = 0;  // in [0, 1] when the answer is yes: the share of time it plausibly costs
  std::vector<Evidence> evidence;
  std::string detail;  // what the finding adds for this kernel (Finding::detail)
  // The severity is the SM's headroom, not the share the node measured: the kernel could gain
  // at most that without taking work from its busiest unit (the sync node's cap).
  bool bounded_by_headroom = false;
};

inline Evidence evidence(const std::string& metric, std::optional<double> value,
                         const std::string& relation = "", const std::string& threshold = "",
                         double threshold_value = 0) {
  return {metric, value, relation, threshold, threshold_value};
}

Outcome yes(double severity, std::vector<Evidence> ev);
Outcome no(std::vector<Evidence> ev);
Outcome not_measured(std::vector<Evidence> ev);

// Problem findings rank above the two "where the kernel stands" findings (at the roof,
// compute-bound), which are principal only when nothing else was found.
inline constexpr double kStandingScore = 0.3;

// How a node presents itself in the path, and how its finding ranks.
struct NodeInfo {
  const char* id;
  const char* question;
  const char* expression;
  const char* finding;  // the finding a "yes" produces
  // A finding that says where the kernel stands rather than what is wrong has this fixed score,
  // at most kStandingScore + 0.05 (0: a problem, scored by its severity).
  double standing_score = 0;
};

// A problem's score is 0.4 + 0.6 x its severity; a standing finding's is its node's.
double score_of(const NodeInfo& node, double severity);
bool is_standing(const Finding& finding);

// Appends the node's step to the path, and its finding when the answer is a yes that costs at
// least `min_severity` of the time (a smaller one is answered "yes, negligible").
void record(Diagnosis& out, const NodeInfo& node, const Outcome& outcome, double min_severity);

// Sorts the findings by score and drops the standing ones when a problem was found: next to a
// problem they would mislead (the SM throughput of a naive matmul is its load pipe). With
// `roof_leads`, the standing findings lead instead and the problems follow them: the caller has
// found the kernel at a roof that every problem's gain is bounded by.
void rank(Diagnosis& out, bool roof_leads = false);

}  // namespace gpulab::report::walk
