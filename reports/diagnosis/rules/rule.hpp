// A diagnosis rule, declared in one place: one file of reports/diagnosis/rules/ holds the question
// its node asks, the finding a "yes" gives, the thresholds it owns (units, defaults, ranges), the
// quantities its evidence shows beyond metrics and their units, the counters without which it
// answers "not measured", how its finding ranks, and the check itself. The walks
// (reports/diagnosis/decision_tree.cpp, timeline_diagnosis.cpp) place the rules in their trees;
// the catalogues (reports/diagnosis/catalogue.cpp) and the ranking read these declarations.
// docs/adding-a-rule.md says how to add one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis_model.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/source/line_view.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report::walk {

enum class Answer { yes, no, not_measured };

// What evaluating one rule produced.
struct Outcome {
  Answer answer = Answer::not_measured;
  double severity = 0;  // in [0, 1] when the answer is yes: the share of time it plausibly costs
  std::vector<Evidence> evidence;
  std::string detail;  // what the finding adds for this kernel (Finding::detail)
  // The severity is the SM's headroom, not the share the node measured: the kernel could gain
  // at most that without taking work from its busiest unit (the sync node's cap).
  bool bounded_by_headroom = false;
  // The finding ranks before every other problem of its kernel: what it names idles part of the
  // GPU whatever the rest does (a grid with fewer blocks than SMs: the occupancy node).
  bool leads = false;
};

inline Evidence evidence(const std::string& metric, std::optional<double> value,
                         const std::string& relation = "", const std::string& threshold = "",
                         double threshold_value = 0) {
  return {metric, value, relation, threshold, threshold_value};
}

Outcome yes(double severity, std::vector<Evidence> ev);
Outcome no(std::vector<Evidence> ev);
Outcome not_measured(std::vector<Evidence> ev);

// What a rule may read: the kernel's raw and derived metrics and its context (a kernel rule), or
// the variant's timeline (a timeline rule); and the thresholds.
class Probe {
 public:
  Probe(const KernelContext& kernel, const Thresholds& t) : kernel_(&kernel), t_(t) {}
  Probe(const Timeline& timeline, const Thresholds& t) : timeline_(&timeline), t_(t) {}

  // A raw or derived metric of the kernel; empty when it was not measured, or for a timeline.
  std::optional<double> metric(const std::string& name) const;
  double threshold(const std::string& name) const { return t_[name]; }
  const KernelContext& context() const { return *kernel_; }  // a kernel rule's only
  const Timeline& timeline() const { return *timeline_; }    // a timeline rule's only

 private:
  const KernelContext* kernel_ = nullptr;
  const Timeline* timeline_ = nullptr;
  const Thresholds& t_;
};

// Evidence that holds `value` against the threshold `threshold` (its current value).
inline Evidence against(const Probe& p, const std::string& metric, std::optional<double> value,
                        const std::string& relation, const std::string& threshold) {
  return evidence(metric, value, relation, threshold, p.threshold(threshold));
}

// Problem findings rank above the two "where the kernel stands" findings (at the roof,
// compute-bound), which are principal only when nothing else was found.
inline constexpr double kStandingScore = 0.3;

// How a rule's finding ranks beside the others of its walk, beyond its score.
enum class Rank {
  by_score,
  // Waiting on memory (latency-bound) is the symptom; too few resident warps to hide the wait,
  // loads that each wait on more sectors than they use, spills that turn registers into memory
  // loads, and atomics that queue at one L2 slice ahead of the loads are its causes. Found
  // beside it, a cause ranks first: it names the change that shortens or hides the wait, which
  // "latency-bound" alone does not.
  cause_of_waiting,
  waiting,
  // The memory branch's other problems (uncoalesced or redundant traffic, bank conflicts, a
  // tail) are reasons a kernel is below the roof: named, they rank first, and this finding says
  // what the counters show beyond them.
  after_problems,
};

// A quantity a rule's evidence shows that is not a metric of the catalogue (a share, a ratio of
// two counters), with its unit.
struct Quantity {
  const char* name;
  metrics::Unit unit;
};

// Where a rule's finding sits in the code: the part of an instruction's counters (its
// SassInstruction::counters) that its evidence counts, and what that part is, for "97% of the
// global sectors beyond 4 per request"; and what a line's figures say of it. `otherwise` is
// measured where this measure finds nothing in a kernel (its counter was not collected there).
struct LineMeasure {
  std::string what;
  std::function<double(const std::map<std::string, double>& counters)> amount;
  std::function<std::string(const LineFigures& figures)> detail;
  std::shared_ptr<const LineMeasure> otherwise;
};

struct Rule {
  const char* id;                           // the node's id in the path ("coalescing"); stable API
  const char* question;                     // what the node asks, as the path prints it
  const char* expression;                   // what it computes, in metric names
  FindingTraits finding;                    // what a "yes" gives
  std::vector<ThresholdTraits> thresholds;  // those it owns (others' it reads by name)
  std::vector<Quantity> quantities;         // its evidence's own quantities
  // The counters without which it answers "not measured" (the inputs of the derived metrics it
  // reads): a report without them names the rule and the metric set that measures them.
  std::vector<const char*> needs;
  std::function<Outcome(const Probe&)> check;
  // A finding that says where the kernel stands rather than what is wrong has this fixed score,
  // at most kStandingScore + 0.05 (0: a problem, scored by its severity).
  double standing_score = 0;
  Rank rank = Rank::by_score;
  const char* verdict = nullptr;  // the verdict its finding sets when it is principal
  // For a line-shaped finding, where per-instruction data exists: how its lines are found.
  std::optional<LineMeasure> lines;
  // What fixing the finding is worth (reports/diagnosis/estimates.hpp): the model ("roof",
  // "tail"; none: no estimate), and whether it met the bounds on the labs' fixes
  // (docs/estimates.md), without which the finding gives no estimate.
  const char* estimate_model = nullptr;
  bool estimate_calibrated = false;
};

}  // namespace gpulab::report::walk
