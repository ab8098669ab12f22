// The outside corpus's labels (tests/fixtures/outside/labels.json; tests/fixtures/README.md,
// "The outside corpus", says how an entry is justified): for each library kernel recorded on the
// H200, the principal bottleneck an engineer decided from ncu's rule output, its counters and the
// algorithm, before looking at gpulab's diagnosis. This reads and validates that file, finds each
// labelled kernel in its diagnosed report, and judges gpulab's principal finding against the
// label. The label is the reference: gpulab is what is being tested.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/report_fwd.hpp"

namespace gpulab::outside {

inline constexpr const char* kLabelsSchema = "gpulab.outside-labels/1";

// The labels that are not finding ids: "none", no bottleneck worth a finding (the kernel runs
// near what its work allows in every respect ncu reports); "too-little-work", the launch is too
// small or too short for its counters to show a bottleneck (a grid of one block, an init kernel
// of a few microseconds).
inline constexpr const char* kNoBottleneck = "none";
inline constexpr const char* kTooLittleWork = "too-little-work";

// The two sets of the corpus. Thresholds may be fitted on the labs and the tuning set only; the
// held-out set scores the diagnosis on kernels nothing was fitted to (docs/diagnosis.md, "Tuning
// and held-out kernels").
inline constexpr const char* kTuningSet = "tuning";
inline constexpr const char* kHeldOutSet = "held-out";

struct LabelEntry {
  std::string report;         // the report's file name, in the corpus folder
  std::string function;       // ECMAScript regular expression, searched in the demangled name
  std::optional<int> launch;  // the launch (Kernel::launch_index); absent: the function as a whole
  std::string label;          // a finding id, "none" or "too-little-work"
  std::string set;            // kTuningSet or kHeldOutSet
  std::string evidence;       // ncu's first rule message and the counters behind the label
  std::string reasoning;      // what the algorithm does that makes this the bottleneck
  std::string disagreement;   // why gpulab's answer differs, once known; empty while it agrees
  // A label changed after gpulab's answer was known, on ncu's evidence: the label as first
  // decided, and what the change rests on. Empty for a label as first decided. The corpus test
  // scores both, so that a revision can never quietly raise the score.
  std::string revised_from;
  std::string revision;

  // The label as first decided: `revised_from` where the label was revised.
  const std::string& first_label() const { return revised_from.empty() ? label : revised_from; }
};

// One row of the frozen labels (tests/fixtures/outside/frozen-labels.tsv): an entry's kernel, its
// label as first decided and its set, recorded when the entry was added and never changed.
struct FrozenLabel {
  std::string report, function, launch;  // launch: "-" for the function as a whole
  std::string label, set;
};

// Parses the frozen labels: tab-separated rows of five fields; '#' starts a comment line.
// Throws UsageError naming the line and the problem.
std::vector<FrozenLabel> parse_frozen(const std::string& text, const std::string& where);
std::vector<FrozenLabel> load_frozen(const std::string& path);

// What differs between the entries and the frozen labels, one line each: an entry without its
// frozen row (added without freezing), a frozen row without its entry (a label removed), a label
// as first decided or a set that is not the frozen one (changed in place). Empty when they agree.
std::vector<std::string> frozen_differences(const std::vector<LabelEntry>& entries,
                                            const std::vector<FrozenLabel>& frozen);

// Parses a labels document. Throws UsageError naming the place and the problem, e.g.
// "labels.json: kernels[2].label: 'memory-bound' is no finding id, 'none' or 'too-little-work'":
// a label file with a typo must not quietly judge fewer kernels.
std::vector<LabelEntry> parse_labels(const std::string& text, const std::string& where);
std::vector<LabelEntry> load_labels(const std::string& path);

// Whether gpulab's answer says what the label says: its principal finding, "too-little-work"
// (the verdict of a short kernel launched a few times, which has no findings), or empty for
// none.
bool agrees(const std::string& label, const std::string& answer);

struct Verdict {
  std::string kernel;  // the report, the function's display name, and the launch if named
  std::string label;
  std::string principal;  // gpulab's principal finding, "none" when there is none
  bool agrees = false;
  std::size_t findings = 0;  // the judged launch's findings (the most of any, for a function)
  std::string problem;  // why the entry could not be judged (no such function, ...); else empty
};

// Finds the entry's kernel in `diagnosed` (a report after derive_all and diagnose_report) and
// judges it: the function is the one variant whose demangled name the pattern matches; without a
// launch, its principal finding (reports/diagnosis/diagnosis.hpp) is compared, with one, that
// launch's.
Verdict judge(const LabelEntry& entry, const report::Report& diagnosed);

}  // namespace gpulab::outside
