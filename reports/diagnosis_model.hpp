// A diagnosis as the report holds it: the path the decision tree's walk took, with the evidence
// each node weighed, and the ranked findings. Part of the report model (reports/report.hpp);
// reports/diagnosis/diagnosis.hpp computes it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::report {

// One measured value the diagnosis relied on, and the threshold it was held against.
struct Evidence {
  std::string metric;           // raw, derived or attribute name
  std::optional<double> value;  // nullopt: not measured
  std::string relation;         // ">=", "<", ... (empty when no threshold applies)
  std::string threshold;        // threshold name (docs/diagnosis.md)
  double threshold_value = 0;
};

// One node of the decision tree as the walk met it.
struct PathStep {
  std::string node;  // stable node id, e.g. "bottleneck", "shared-banks"
  int depth = 0;     // 0 for the root
  std::string question;
  std::string expression;  // the metric expression evaluated
  std::vector<Evidence> evidence;
  std::string answer;   // "yes", "no", "not measured", or the branch taken ("memory", ...)
  std::string finding;  // the finding id a "yes" produced, if any
  // An answer "not measured" for want of counters: those the rule needs that the kernel lacked.
  std::vector<std::string> missing;
};

// A source line where a finding sits, from the kernel's per-instruction counters.
struct FindingLine {
  std::string file;
  int line = 0;
  double share = 0;    // of the finding's own evidence in the kernel, `what`
  std::string what;    // "the global sectors beyond 4 per request"
  std::string detail;  // what the line's counters say of it ("32.0 sectors per request")
};

// What fixing a finding is worth, by a model calibrated on the labs' own fixes
// (reports/diagnosis/estimates.hpp, docs/estimates.md).
struct Estimate {
  double saved = 0;   // fraction of the variant's time the fix saves, 0 to 1
  std::string model;  // "roof", "tail"
  std::map<std::string, double> inputs;
  double speedup() const { return saved < 1 ? 1.0 / (1.0 - saved) : 0.0; }
};

struct Finding {
  std::string id;
  std::string title;
  std::string severity;  // "high", "medium", "low"
  double score = 0;      // ranking key in [0, 1]
  std::vector<Evidence> evidence;
  std::string explanation;
  std::string recommendation;
  std::string detail;    // what this kernel's evidence adds (the occupancy limiter); may be empty
  std::string false_if;  // the evidence that would make the finding false
  std::vector<std::string> labs;
  // Where per-line data exists: the lines that hold most of the finding's evidence, at most three.
  std::vector<FindingLine> lines;
  // Where its rule's model is calibrated and the variant has what it needs; none otherwise.
  std::optional<Estimate> estimate;
};

struct Diagnosis {
  std::string verdict;  // memory-bound, compute-bound, latency-bound, launch-bound
  std::vector<PathStep> path;
  std::vector<Finding> findings;  // ranked: the principal finding first
  // What the verdict depends on, where it sits near a boundary that another card of the same
  // chip would cross (the memory balance: reports/diagnosis/balance.hpp). Empty otherwise.
  std::vector<std::string> caveats;
  std::map<std::string, double> thresholds_overridden;
};

}  // namespace gpulab::report
