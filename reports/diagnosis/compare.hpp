// Comparing reports: before/after on one machine, one machine against another, or two variants
// of one report. Noise-aware for time, near-exact for deterministic counters.
//
// Time verdicts. Each report keeps its timing samples. The relative spread of a variant is
// its robust standard deviation (1.4826 x median absolute deviation of the samples, or the
// stored stddev when there are no samples) over its median. Two medians are "same" when their
// relative difference is within max(kNoiseSigmas x the combined spread, kNoiseFloor): the
// floor covers what varies between processes and is invisible inside one run (clocks, memory
// placement). Outside that band the variant is "faster" or "slower".
//
// Counter verdicts. Counters of deterministic work (sectors, requests, instructions,
// wavefronts, bytes) repeat exactly or nearly so; each metric has a relative tolerance
// (metric_tolerance) within which it is "same".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/measures.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

inline constexpr double kNoiseSigmas = 3.0;
// Lines compared per kernel: the hottest of each side.
inline constexpr std::size_t kLinesCompared = 5;
inline constexpr double kNoiseFloor = 0.02;

enum class Verdict { same, faster, slower, changed, added, removed };
const char* to_string(Verdict v);

struct MetricDelta {
  std::string name;   // CUPTI or derived metric name
  std::string label;  // short label for tables
  std::optional<double> a, b;
  double change = 0;  // (b - a) / |a|; 0 when either is missing or a is 0
  Verdict verdict = Verdict::same;
};

// A source line of a kernel both reports hold per-instruction data of: its share of the kernel's
// stall samples (of its instructions executed, where neither side took samples) in A and in B.
struct LineDelta {
  std::string file;
  int line = 0;    // A's line (B's when A has none)
  int line_b = 0;  // B's line: another number where the line moved and its instructions did not
  std::optional<double> a, b;  // the line's share; empty where that side has no such line
  std::string matched_by;      // "line" (file and number), "instruction" (the same SASS), or ""
};

struct KernelDelta;
// How the renderers name a compared kernel: "tiled", "a → b", "gemm in train/step".
std::string delta_label(const KernelDelta& k);

struct KernelDelta {
  std::string name;    // kernel name in A (B's when A has none)
  std::string name_b;  // kernel name in B (empty when B has none)
  // A profiled program's launches: the NVTX range path they share (reports/nvtx_filter.hpp).
  std::string nvtx_path;
  std::vector<MetricDelta> metrics;
  // Where both kernels hold per-instruction data: the lines hot in either (reports/source/
  // line_view.hpp), hottest in A first.
  std::vector<LineDelta> lines;
};

// One of A's findings whose fix has an estimated worth (reports/diagnosis/estimates.hpp), to set
// beside the change measured from A to B: where B no longer has the finding, the measured speedup
// is what the fix was worth.
struct EstimatedFix {
  std::string finding;    // the finding's id
  double saved = 0;       // the fraction of A's time the fix was estimated to save
  std::string model;      // "roof", "tail"
  bool resolved = false;  // B no longer has the finding
  double speedup() const { return saved < 1 ? 1.0 / (1.0 - saved) : 0.0; }
};

// One variant (or one variant pair with --variants) across two reports.
struct VariantComparison {
  std::string lab;
  std::string variant_a, variant_b;  // equal unless two variants of one report are compared
  std::optional<TimingStats> time_a, time_b;
  double change = 0;   // relative median change, (b - a) / a
  double speedup = 0;  // a / b
  double noise = 0;    // the relative band inside which the change counts as "same"
  Verdict verdict = Verdict::same;
  std::vector<KernelDelta> kernels;
  // Timeline figures (reports/timeline.hpp), when either side was traced.
  std::vector<MetricDelta> timeline;
  // The principal finding of A and of B (reports/diagnosis/diagnosis.hpp), shown first; empty when
  // the variant was not diagnosed or nothing was found.
  std::string principal_a, principal_b;
  // Diagnosis findings (ids) that B no longer has, that B newly has, and that both have.
  std::vector<std::string> findings_resolved, findings_introduced, findings_unchanged;
  // A's findings that carry an estimate, in A's ranking order.
  std::vector<EstimatedFix> estimates;

  // How the tables name it: "naive", "naive → padded", or the one side's name where the other
  // has none (an added or removed variant).
  std::string label() const;
};

struct Comparison {
  std::string label_a, label_b;  // file names (or "file:variant")
  std::vector<std::string> warnings;
  std::vector<VariantComparison> variants;

  // The variants that got slower, outside noise, by more than `percent` percent.
  std::vector<const VariantComparison*> regressions(double percent) const;
};

struct CompareOptions {
  std::vector<std::string> metrics;  // metric names to compare; empty = default_compare_metrics()
};

// The metrics compared by default: DRAM bytes, sectors per request, excess wavefronts, local
// bytes, occupancy and throughput.
std::vector<std::string> default_compare_metrics();

// Relative tolerance within which a metric counts as unchanged.
double metric_tolerance(const std::string& name);

// Timeline figures vary with what else the machine does: a fraction counts as unchanged within
// kTimelineFractionTolerance (absolute), any other figure within kTimelineTolerance (relative).
inline constexpr double kTimelineFractionTolerance = 0.05;
inline constexpr double kTimelineTolerance = 0.10;

// Compares A with B variant by variant (matched by lab and variant name; kernels by name and
// launch order). Variants present on one side only are listed as added or removed. Throws
// UsageError when A and B are reports of different labs.
Comparison compare_reports(const Report& a, const Report& b, const std::string& label_a,
                           const std::string& label_b, const CompareOptions& options = {});

// Compares two variants of one report (their kernels matched by launch order).
Comparison compare_variants(const Report& report, const std::string& variant_a,
                            const std::string& variant_b, const std::string& label,
                            const CompareOptions& options = {});

// The relative robust spread of a timing (see the header comment).
double relative_spread(const TimingStats& t);

}  // namespace gpulab::report
