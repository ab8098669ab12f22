#include "reports/diagnosis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/derived.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/principal.hpp"
#include "reports/report.hpp"
#include "reports/source/line_view.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;
namespace d = derived;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::optional<double> value_of(const Kernel& k, const std::string& name) {
  if (auto it = k.metrics.find(name); it != k.metrics.end()) return it->second;
  if (auto it = k.derived.find(name); it != k.derived.end()) return it->second;
  return std::nullopt;
}

std::string label_of(const std::string& name) {
  if (const auto* traits = metrics::find(name)) return traits->short_name;
  return name;
}

// Fills the verdict of a delta whose values are set; `same` says whether two present values
// count as unchanged.
template <typename Same>
void judge(MetricDelta& out, Same same) {
  if (out.a && !out.b) {
    out.verdict = Verdict::removed;
  } else if (!out.a && out.b) {
    out.verdict = Verdict::added;
  } else if (out.a && out.b) {
    if (*out.a != 0) out.change = (*out.b - *out.a) / std::fabs(*out.a);
    out.verdict = same(*out.a, *out.b) ? Verdict::same : Verdict::changed;
  }
}

MetricDelta delta(const std::string& name, const Kernel* a, const Kernel* b) {
  MetricDelta out;
  out.name = name;
  out.label = label_of(name);
  if (a) out.a = value_of(*a, name);
  if (b) out.b = value_of(*b, name);
  judge(out, [&](double x, double y) {
    return x == 0 ? y == 0 : std::fabs(out.change) <= metric_tolerance(name);
  });
  return out;
}

std::vector<MetricDelta> timeline_deltas(const Variant* a, const Variant* b) {
  const Timeline* ta = a && a->timeline ? &*a->timeline : nullptr;
  const Timeline* tb = b && b->timeline ? &*b->timeline : nullptr;
  std::vector<MetricDelta> out;
  if (!ta && !tb) return out;
  for (const auto& figure : timeline_figures()) {
    MetricDelta d;
    d.name = d.label = figure.name;
    if (ta) d.a = figure.get(ta->summary);
    if (tb) d.b = figure.get(tb->summary);
    const bool fraction = figure.unit == metrics::Unit::fraction;
    judge(d, [&](double x, double y) {
      if (fraction) return std::fabs(y - x) <= kTimelineFractionTolerance;
      return x == 0 ? y == 0 : std::fabs(d.change) <= kTimelineTolerance;
    });
    out.push_back(std::move(d));
  }
  return out;
}

// A line's instructions as text: what finds a line again after the source around it moved.
std::vector<std::string> code_of(const LineRow& row) {
  std::vector<std::string> out;
  for (const auto* i : row.instructions) out.push_back(i->sass);
  return out;
}

double share_of(const LineRow& row, const LineView& view) {
  return view.total > 0 ? weight_of(row.counters, view) / view.total : 0.0;
}

// The lines hot in A or in B, each matched on the other side by the same instructions in the same
// file (the line itself, or the line after the code around it moved), else by file and number (a
// line whose code changed), else shown on one side only.
std::vector<LineDelta> line_deltas(const KernelSource& a, const KernelSource& b) {
  const LineView va = lines_of(a), vb = lines_of(b);
  if (va.weight.empty() || va.weight != vb.weight) return {};
  const auto find = [](const LineView& v, const LineRow& row) -> const LineRow* {
    for (const auto& r : v.rows)
      if (r.where == row.where) return &r;
    return nullptr;
  };
  const auto by_code = [&](const LineView& v, const LineRow& row) -> const LineRow* {
    const LineRow* found = nullptr;
    for (const auto& r : v.rows)
      if (r.where.file == row.where.file && code_of(r) == code_of(row)) {
        if (found) return nullptr;  // ambiguous: not a match
        found = &r;
      }
    return found;
  };
  std::vector<LineDelta> out;
  std::vector<const LineRow*> done_b;
  const auto unused = [&done_b](const LineRow* r) {
    return r && std::find(done_b.begin(), done_b.end(), r) == done_b.end() ? r : nullptr;
  };
  for (const auto* row : hottest(va, kLinesCompared)) {
    LineDelta d{row->where.file, row->where.line, 0, share_of(*row, va), std::nullopt, ""};
    const LineRow* match = unused(by_code(vb, *row));
    if (match)
      d.matched_by = match->where.line == row->where.line ? "line" : "instruction";
    else if ((match = unused(find(vb, *row))))
      d.matched_by = "line";
    if (match) {
      d.line_b = match->where.line;
      d.b = share_of(*match, vb);
      done_b.push_back(match);
    }
    out.push_back(d);
  }
  for (const auto* row : hottest(vb, kLinesCompared)) {
    if (std::find(done_b.begin(), done_b.end(), row) != done_b.end()) continue;
    LineDelta d{row->where.file, row->where.line,    row->where.line,
                std::nullopt,    share_of(*row, vb), ""};
    if (const LineRow* match = find(va, *row)) {
      d.a = share_of(*match, va);
      d.matched_by = "line";
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::string delta_label(const KernelDelta& k) {
  std::string label = k.name_b.empty() || k.name_b == k.name ? k.name : k.name + " → " + k.name_b;
  return k.nvtx_path.empty() ? label : label + " in " + k.nvtx_path;
}

namespace {

KernelDelta kernel_delta(const Kernel* a, const Kernel* b, const CompareOptions& options) {
  KernelDelta out;
  out.name = a ? a->name : b->name;
  out.name_b = b ? b->name : "";
  out.nvtx_path = a ? a->nvtx_path : b->nvtx_path;
  const auto names = options.metrics.empty() ? default_compare_metrics() : options.metrics;
  for (const auto& name : names) {
    auto md = delta(name, a, b);
    if (md.a || md.b) out.metrics.push_back(std::move(md));
  }
  if (a && b && a->source && b->source) out.lines = line_deltas(*a->source, *b->source);
  return out;
}

// Kernels matched by name and NVTX range path, then by order among the kernels that share both:
// step 10 of one run meets step 10 of the other. With `by_order` (two different variants), by
// launch order alone.
std::vector<KernelDelta> kernel_deltas(const Variant* a, const Variant* b, bool by_order,
                                       const CompareOptions& options) {
  std::vector<KernelDelta> out;
  const std::size_t na = a ? a->kernels.size() : 0, nb = b ? b->kernels.size() : 0;
  if (by_order) {
    for (std::size_t i = 0; i < std::max(na, nb); ++i)
      out.push_back(kernel_delta(i < na ? &a->kernels[i] : nullptr,
                                 i < nb ? &b->kernels[i] : nullptr, options));
    return out;
  }
  std::vector<bool> used(nb, false);
  for (std::size_t i = 0; i < na; ++i) {
    const Kernel* match = nullptr;
    for (std::size_t j = 0; j < nb && !match; ++j) {
      if (!used[j] && b->kernels[j].name == a->kernels[i].name &&
          b->kernels[j].nvtx_path == a->kernels[i].nvtx_path) {
        used[j] = true;
        match = &b->kernels[j];
      }
    }
    out.push_back(kernel_delta(&a->kernels[i], match, options));
  }
  for (std::size_t j = 0; j < nb; ++j)
    if (!used[j]) out.push_back(kernel_delta(nullptr, &b->kernels[j], options));
  return out;
}

std::set<std::string> finding_ids(const Variant* v) {
  std::set<std::string> ids;
  if (!v) return ids;
  for (const Diagnosis* d : diagnoses_of(*v))
    for (const auto& f : d->findings) ids.insert(f.id);
  return ids;
}

bool diagnosed(const Variant* v) { return v && has_diagnosis(*v); }

void compare_findings(const Variant* a, const Variant* b, VariantComparison& out) {
  if (!diagnosed(a) || !diagnosed(b)) return;
  out.principal_a = principal_finding(*a);
  out.principal_b = principal_finding(*b);
  const auto fa = finding_ids(a), fb = finding_ids(b);
  for (const auto& id : fa)
    (fb.count(id) ? out.findings_unchanged : out.findings_resolved).push_back(id);
  for (const auto& id : fb)
    if (!fa.count(id)) out.findings_introduced.push_back(id);
  // An estimate is the variant's (one per finding, whichever kernel's diagnosis holds it).
  std::set<std::string> estimated;
  for (const Diagnosis* d : diagnoses_of(*a))
    for (const auto& f : d->findings)
      if (f.estimate && estimated.insert(f.id).second)
        out.estimates.push_back({f.id, f.estimate->saved, f.estimate->model, !fb.count(f.id)});
}

}  // namespace

std::string VariantComparison::label() const {
  if (variant_a.empty()) return variant_b;
  if (variant_b.empty() || variant_a == variant_b) return variant_a;
  return variant_a + " → " + variant_b;
}

namespace {

VariantComparison compare_variant(const std::string& lab, const Variant* a, const Variant* b,
                                  bool by_order, const CompareOptions& options) {
  VariantComparison out;
  out.lab = lab;
  out.variant_a = a ? a->name : "";
  out.variant_b = b ? b->name : "";
  const bool timed_a = a && a->timing.median > 0, timed_b = b && b->timing.median > 0;
  if (timed_a) out.time_a = a->timing;
  if (timed_b) out.time_b = b->timing;
  if (!a) {
    out.verdict = Verdict::added;
  } else if (!b) {
    out.verdict = Verdict::removed;
  } else if (timed_a && timed_b) {
    out.change = (b->timing.median - a->timing.median) / a->timing.median;
    out.speedup = a->timing.median / b->timing.median;
    const double spread = std::hypot(relative_spread(a->timing), relative_spread(b->timing));
    out.noise = std::max(kNoiseSigmas * spread, kNoiseFloor);
    if (std::fabs(out.change) <= out.noise) {
      out.verdict = Verdict::same;
    } else {
      out.verdict = out.change < 0 ? Verdict::faster : Verdict::slower;
    }
  }
  out.kernels = kernel_deltas(a, b, by_order, options);
  out.timeline = timeline_deltas(a, b);
  compare_findings(a, b, out);
  return out;
}

void warn_about_differences(const Report& a, const Report& b, Comparison& c) {
  if (a.device.name != b.device.name) {
    c.warnings.push_back(
        fmt::format("different devices ({} vs {}): differences include the "
                    "hardware, not only the code",
                    a.device.name, b.device.name));
  }
  if (a.tool.version != b.tool.version) {
    c.warnings.push_back(
        fmt::format("different gpulab versions ({} vs {})", a.tool.version, b.tool.version));
  }
  if (a.params != b.params) {
    std::string pa, pb;
    for (const auto& [k, v] : a.params) pa += fmt::format("{}{}={}", pa.empty() ? "" : " ", k, v);
    for (const auto& [k, v] : b.params) pb += fmt::format("{}{}={}", pb.empty() ? "" : " ", k, v);
    c.warnings.push_back(fmt::format("different parameters ({} vs {})", pa, pb));
  }
}

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::same:
      return "same";
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::changed:
      return "changed";
    case Verdict::added:
      return "added";
    case Verdict::removed:
      return "removed";
  }
  return "?";
}

std::vector<std::string> default_compare_metrics() {
  return {m::duration,
          d::dram_bytes,
          m::dram_read,
          d::dram_read_over_model,
          d::gld_sectors_per_request,
          d::gst_sectors_per_request,
          d::shared_excess_wavefronts,
          d::local_bytes,
          d::achieved_occupancy,
          m::dram_pct,
          m::sm_pct};
}

double metric_tolerance(const std::string& name) {
  // DRAM writes depend on when L2 writes lines back: ~10% between identical runs.
  if (name == m::dram_write || name == d::dram_bytes || name == d::dram_write_over_model ||
      name == d::dram_over_model || name == d::dram_bandwidth)
    return 0.12;
  // Wavefronts beyond the ideal vary a few percent between runs (H200: up to 5%).
  if (name == d::shared_excess_wavefronts) return 0.10;
  // Durations under replay, throughputs, occupancy and hit rates depend on clocks and timing.
  if (name == m::duration || name == m::dram_pct || name == m::sm_pct ||
      name == m::warps_active_pct || name == d::achieved_occupancy || name == d::occupancy_ratio ||
      name == m::l1_hit_pct || name == m::l2_hit_pct)
    return 0.05;
  // Counts of deterministic work: sectors, requests, instructions, bytes read.
  return 0.02;
}

double relative_spread(const TimingStats& t) {
  if (t.median <= 0) return 0;
  if (t.samples.size() >= 3) {
    const double med = median_of(t.samples);
    std::vector<double> dev;
    for (double s : t.samples) dev.push_back(std::fabs(s - med));
    return 1.4826 * median_of(dev) / t.median;
  }
  return t.stddev / t.median;
}

std::vector<const VariantComparison*> Comparison::regressions(double percent) const {
  std::vector<const VariantComparison*> out;
  for (const auto& v : variants)
    if (v.verdict == Verdict::slower && v.change * 100.0 > percent) out.push_back(&v);
  return out;
}

Comparison compare_reports(const Report& a, const Report& b, const std::string& label_a,
                           const std::string& label_b, const CompareOptions& options) {
  // Variants are matched by name, and a regression gate judges the pairs: two labs share
  // names ("naive", "tiled") but not kernels, so pairing them would gate on nonsense.
  const auto what = [](const Report& r) {
    return fmt::format("{} '{}'", r.program ? "program" : "lab", r.subject());
  };
  if (what(a) != what(b))
    throw UsageError(
        fmt::format("'{}' is a report of {} and '{}' of {}: compare reports of one "
                    "lab or of one program",
                    label_a, what(a), label_b, what(b)));
  Comparison c;
  c.label_a = label_a;
  c.label_b = label_b;
  warn_about_differences(a, b, c);
  for (const auto& va : a.variants)
    c.variants.push_back(
        compare_variant(a.subject(), &va, b.find_variant(va.name), false, options));
  for (const auto& vb : b.variants)
    if (!a.find_variant(vb.name))
      c.variants.push_back(compare_variant(b.subject(), nullptr, &vb, false, options));
  return c;
}

Comparison compare_variants(const Report& report, const std::string& variant_a,
                            const std::string& variant_b, const std::string& label,
                            const CompareOptions& options) {
  const Variant* a = report.find_variant(variant_a);
  const Variant* b = report.find_variant(variant_b);
  for (const auto& [name, v] : {std::pair{variant_a, a}, std::pair{variant_b, b}}) {
    if (!v) throw UsageError(fmt::format("'{}' has no variant '{}'", label, name));
  }
  Comparison c;
  c.label_a = label + ":" + variant_a;
  c.label_b = label + ":" + variant_b;
  c.variants.push_back(compare_variant(report.subject(), a, b, true, options));
  return c;
}

}  // namespace gpulab::report
