// The pieces both diagnosis walks share, the kernel's (reports/diagnosis/decision_tree.cpp) and the
// timeline's (reports/diagnosis/timeline_diagnosis.cpp): the rules each can visit, how a rule's
// answer becomes a step of the path and perhaps a finding, and how findings are ranked.
#pragma once

#include <vector>

#include "reports/diagnosis/rules/rule.hpp"
#include "reports/diagnosis_model.hpp"

namespace gpulab::report::walk {

// A walk as the catalogues see it: what its root declares, and every rule it can visit.
struct Walk {
  std::vector<ThresholdTraits> thresholds;  // the root's and the walk's own
  std::vector<Quantity> quantities;         // the quantities the root's evidence shows
  std::vector<const Rule*> rules;           // each once, in the order the walk first visits it
};
const Walk& kernel_walk();    // reports/diagnosis/decision_tree.cpp
const Walk& timeline_walk();  // reports/diagnosis/timeline_diagnosis.cpp

// How the rest of gpulab sees `rule`, a rule of the walk `walk` ("kernel", "timeline").
RuleInfo describe(const Rule& rule, const char* walk);

// A problem's score is 0.4 + 0.6 x its severity; a standing finding's is its rule's.
double score_of(const Rule& rule, double severity);
// A rule whose finding says where the kernel stands (at the roof, compute-bound), not a problem.
bool is_standing(const Rule& rule);

// The findings of one walk until they are ranked, each beside the rule that gave it: the ranking
// reads each rule's declarations (standing or problem, its Rank, its verdict) through the rule
// itself, never by comparing finding ids.
class Findings {
 public:
  // Appends the rule's step to the path, and keeps its finding when the answer is a yes that
  // costs at least `min_severity` of the time (a smaller one is answered "yes, negligible").
  // Returns whether it kept one.
  bool record(Diagnosis& out, const Rule& rule, const Outcome& outcome, double min_severity);

  // Ranks the findings into out.findings, and sets the verdict of the principal finding's rule
  // where it names one. By score first, dropping the standing findings when a problem was found:
  // next to a problem they would mislead (the SM throughput of a naive matmul is its load pipe).
  // With `roof_leads`, the standing findings lead instead and the problems follow them: the
  // caller has found the kernel at a roof that every problem's gain is bounded by. Then each
  // rule's Rank: causes of waiting ahead of the first waiting finding, after-problems findings
  // last, and the findings whose outcome `leads` first of all. With `most` above 0, only the
  // first `most` become findings; the others' nodes answer "yes, ranked out".
  void rank_into(Diagnosis& out, bool roof_leads = false, std::size_t most = 0);

 private:
  struct Found {
    Finding finding;
    const Rule* rule;
    bool leads;
  };
  std::vector<Found> found_;
};

}  // namespace gpulab::report::walk
