// Diagnosis: walk the decision tree (reports/diagnosis/decision_tree.cpp) over one kernel's
// counters and say what limits it and what to do. docs/diagnosis.md draws the tree and explains
// every threshold.
//
// Performance is first a question of data movement, so the walk first locates the bottleneck
// class (DRAM bandwidth, SM throughput, or neither: the kernel waits), then checks the access
// pattern, then control flow and synchronization, then resource pressure. Each node evaluates
// one metric expression against named thresholds and answers yes, no, or "not measured" (a
// metric is missing: the walk goes on). A "yes" on a check node is a finding. Findings are
// ranked by a severity score in [0, 1]; the first is the principal finding.
//
// Pure host code: it reads report data and needs no GPU, so it works offline on saved reports
// and on kernels gpulab knows nothing about (without a work model, model-based nodes answer
// "not measured" and the counter ratios decide).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/device_info.hpp"
#include "reports/diagnosis_model.hpp"
#include "reports/measures.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/principal.hpp"
#include "reports/report_fwd.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {

// Named thresholds with documented defaults (docs/diagnosis.md; why each value:
// docs/thresholds.md); overridable by name.
struct ThresholdTraits {
  const char* name;
  double default_value;
  double min, max;  // the values that mean something (a share lies in [0, 1]); others are refused
  const char* meaning;
};
const std::vector<ThresholdTraits>& threshold_catalogue();

class Thresholds {
 public:
  Thresholds();  // the defaults
  double operator[](const std::string& name) const;
  // Throws UsageError for an unknown name, or a value that is not finite or outside the
  // threshold's [min, max].
  void set(const std::string& name, double value);
  // Parses "NAME=VALUE" (reports/base/user_input.hpp); throws UsageError naming the problem.
  void set_from_text(const std::string& assignment);
  const std::map<std::string, double>& values() const { return values_; }
  // The thresholds that differ from their defaults.
  std::map<std::string, double> overridden() const;

 private:
  std::map<std::string, double> values_;
};

// Finding ids are stable API: tests and users depend on them.
struct FindingTraits {
  const char* id;
  const char* title;
  const char* explanation;        // why it costs time
  const char* recommendation;     // what to change
  const char* false_if;           // the evidence that would refute it
  std::vector<const char*> labs;  // labs that demonstrate the fix
};
const std::vector<FindingTraits>& finding_catalogue();
const FindingTraits* find_finding(const std::string& id);

// Everything a walk needs about one kernel and its context.
struct KernelContext {
  const Kernel* kernel = nullptr;
  const Variant* variant = nullptr;  // timing, roof fraction (optional)
  const WorkModel* model = nullptr;  // the lab's work model, when the variant has one kernel
  const DeviceInfo* device = nullptr;
  // Launches of the kernel's function: in one run of a lab's variant, or in a whole program.
  std::int64_t launches = 1;
};

// The unit of an evidence entry: metric units for metrics, and for the walks' own quantities
// (roof_fraction, waves, duration_s, ...) the unit their rule declares.
metrics::Unit evidence_unit(const std::string& metric);

// Diagnoses one kernel.
Diagnosis diagnose(const KernelContext& context, const Thresholds& thresholds);

// A rule of either walk as the rest of gpulab sees it (reports/diagnosis/rules/ declares each).
struct RuleInfo {
  std::string node;                     // its id in the path
  std::string finding;                  // what a "yes" gives
  std::vector<std::string> needs;       // counters without which it answers "not measured"
  std::string walk;                     // "kernel" or "timeline"
  std::vector<std::string> branches;    // the kernel tree's branches that visit it
  std::string question;                 // what it asks
  std::vector<std::string> thresholds;  // those it declares
};
// Every rule of the kernel tree, once, in the order the branches first visit them.
const std::vector<RuleInfo>& kernel_rules();
// Those, then the timeline's rules.
const std::vector<RuleInfo>& all_rules();
// The rule that declares `threshold`; nullptr for a walk's own (the roots', diagnosis.*).
const RuleInfo* rule_of_threshold(const std::string& threshold);

// The rules some kernel of a diagnosed report could not evaluate for want of counters (its step
// answered "not measured" naming the needs it lacked, PathStep::missing), in kernel_rules() order,
// with the smallest metric set that measures each (reports/diagnosis/diagnosis_report.cpp).
struct RuleNotEvaluated {
  const RuleInfo* rule = nullptr;
  std::string metric_set;  // "stalls", "full"; empty when no set holds its counters
};
std::vector<RuleNotEvaluated> rules_not_evaluated(const Report& report);

// The id of the kernel tree's node whose "yes" gives `finding` ("at-roof" for
// memory-bound-at-roof); empty for a finding no kernel node gives.
std::string node_of_finding(const std::string& finding);

// Diagnoses a variant's activity trace: do unoverlapped transfers, on-demand page migrations
// or idle gaps between short kernels take the time? (reports/diagnosis/timeline_diagnosis.cpp).
// Needs the timeline's summary (reports/timeline.hpp).
Diagnosis diagnose_timeline(const Timeline& timeline, const Thresholds& thresholds);

// Diagnoses every kernel with counters and every timeline of every measured variant of a
// report, in place. A kernel function that takes less than diagnosis.min_time_share of its
// variant's GPU time (of the program's, for a profiled program) is left undiagnosed unless
// `asked` says yes to one of its launches (`--kernel`). reports/diagnosis/diagnosis_report.cpp;
// what the rest of gpulab asks of the diagnoses it leaves: reports/principal.hpp.
using KernelAsked = std::function<bool(const Kernel&)>;
void diagnose_report(Report& report, const Thresholds& thresholds, const KernelAsked& asked = {});

}  // namespace gpulab::report
