#include "reports/render/render_compare.hpp"

#include <fmt/format.h>

#include "reports/derived.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/table.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

std::string render(const TextTable& table, const Style& style) {
  return style.table == TableStyle::markdown ? table.render_markdown() : table.render();
}

// `text` is already shown() for this style.
std::string heading(const std::string& text, const Style& style) {
  return style.table == TableStyle::markdown ? "### " + text + "\n\n"
                                             : paint(text, Tone::strong, style) + "\n";
}

std::string variant_name(const VariantComparison& v, const Style& style) {
  return shown(v.label(), style);
}

std::string time_verdict(const VariantComparison& v, const Style& style) {
  switch (v.verdict) {
    case Verdict::faster:
      return paint(fmt::format("faster ({})", units::ratio(v.speedup)), Tone::good, style);
    case Verdict::slower:
      return paint(fmt::format("slower ({})", units::ratio(v.speedup)), Tone::bad, style);
    default:
      return to_string(v.verdict);
  }
}

std::string value_or_dash(const std::optional<double>& v, const std::string& name) {
  return v ? units::metric(*v, unit_of(name)) : "-";
}

std::string list_or_none(const std::vector<std::string>& ids, const Style& style) {
  if (ids.empty()) return "none";
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ", ") + shown(id, style);
  return out;
}

std::string timing_row_median(const std::optional<TimingStats>& t) {
  return t ? units::seconds(t->median) : "-";
}

// Each of A's estimated fixes beside what B measured: where B resolved the finding, the measured
// speedup is the check of the estimate (docs/estimates.md).
std::string estimates_text(const VariantComparison& v, const Style& style) {
  std::string out;
  for (const auto& e : v.estimates) {
    std::string outcome = "B still has it";
    if (e.resolved)
      outcome = v.time_a && v.time_b
                    ? fmt::format("B resolved it; measured speedup {}", units::ratio(v.speedup))
                    : "B resolved it; not timed";
    out += fmt::format("{}estimate for {}: {} est. {} faster if fixed; {}\n",
                       style.table == TableStyle::markdown ? "- " : "", variant_name(v, style),
                       shown(e.finding, style), units::ratio(e.speedup()), outcome);
  }
  return out;
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json timing_json(const std::optional<TimingStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median},
          {"min", t->min},
          {"max", t->max},
          {"repeat", t->repeat},
          {"relative_spread", relative_spread(*t)}};
}

nlohmann::json estimates_json(const std::vector<EstimatedFix>& estimates) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : estimates)
    out.push_back({{"finding", e.finding},
                   {"saved", e.saved},
                   {"speedup", e.speedup()},
                   {"model", e.model},
                   {"resolved", e.resolved}});
  return out;
}

nlohmann::json variant_json(const VariantComparison& v) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : v.kernels) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto& m : k.metrics)
      metrics.push_back({{"name", m.name},
                         {"a", optional_json(m.a)},
                         {"b", optional_json(m.b)},
                         {"change", m.change},
                         {"verdict", to_string(m.verdict)},
                         {"tolerance", metric_tolerance(m.name)}});
    kernels.push_back({{"name", k.name}, {"name_b", k.name_b}, {"metrics", std::move(metrics)}});
    if (!k.nvtx_path.empty()) kernels.back()["nvtx_path"] = k.nvtx_path;
    if (k.lines.empty()) continue;
    auto& lines = kernels.back()["lines"] = nlohmann::json::array();
    for (const auto& l : k.lines)
      lines.push_back({{"file", l.file},
                       {"line", l.line},
                       {"line_b", l.line_b},
                       {"a", l.a ? nlohmann::json(*l.a) : nlohmann::json()},
                       {"b", l.b ? nlohmann::json(*l.b) : nlohmann::json()},
                       {"matched_by", l.matched_by}});
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const auto& m : v.timeline)
    timeline.push_back({{"name", m.name},
                        {"a", optional_json(m.a)},
                        {"b", optional_json(m.b)},
                        {"change", m.change},
                        {"verdict", to_string(m.verdict)}});
  return {{"lab", v.lab},
          {"variant_a", v.variant_a},
          {"variant_b", v.variant_b},
          {"time_a", timing_json(v.time_a)},
          {"time_b", timing_json(v.time_b)},
          {"change", v.change},
          {"speedup", v.speedup},
          {"noise", v.noise},
          {"verdict", to_string(v.verdict)},
          {"kernels", std::move(kernels)},
          {"timeline", std::move(timeline)},
          {"principal", {{"a", v.principal_a}, {"b", v.principal_b}}},
          {"estimates", estimates_json(v.estimates)},
          {"findings",
           {{"resolved", v.findings_resolved},
            {"introduced", v.findings_introduced},
            {"unchanged", v.findings_unchanged}}}};
}

}  // namespace

std::string render_comparison(const Comparison& c, const Style& style) {
  const bool markdown = style.table == TableStyle::markdown;
  std::string out = fmt::format("A: {}{}\nB: {}\n", shown(c.label_a, style), markdown ? "  " : "",
                                shown(c.label_b, style));
  for (const auto& w : c.warnings)
    out += (markdown ? "> warning: " : "warning: ") + shown(w, style) + "\n";
  out += "\n";

  TextTable times({"variant", "A median", "B median", "change", "noise", "verdict"});
  for (const auto& v : c.variants) {
    const bool both = v.time_a && v.time_b;
    times.add_row({variant_name(v, style), timing_row_median(v.time_a), timing_row_median(v.time_b),
                   both ? units::signed_percent(v.change) : "-",
                   both ? fmt::format("±{:.1f}%", v.noise * 100.0) : "-", time_verdict(v, style)});
  }
  out += render(times, style);
  // What limits each variant, before the counters that show why.
  std::string principals;
  for (const auto& v : c.variants)
    if (!v.principal_a.empty() || !v.principal_b.empty())
      principals += fmt::format("{}principal finding of {}: {} → {}\n", markdown ? "- " : "",
                                variant_name(v, style),
                                shown(v.principal_a.empty() ? "none" : v.principal_a, style),
                                shown(v.principal_b.empty() ? "none" : v.principal_b, style));
  if (!principals.empty()) out += "\n" + principals;

  const auto deltas_table = [&](const std::string& title, const std::vector<MetricDelta>& deltas) {
    out += "\n" + heading(title, style);
    TextTable table({"metric", "A", "B", "change", "verdict"});
    for (const auto& m : deltas)
      table.add_row({shown(m.label, style), value_or_dash(m.a, m.name), value_or_dash(m.b, m.name),
                     m.a && m.b && *m.a != 0 ? units::signed_percent(m.change) : "-",
                     to_string(m.verdict)});
    out += render(table, style);
  };
  for (const auto& v : c.variants) {
    if (!v.timeline.empty()) deltas_table(variant_name(v, style) + ": timeline", v.timeline);
    for (const auto& k : v.kernels) {
      if (k.metrics.empty()) continue;
      const std::string kernel = shown(delta_label(k), style);
      deltas_table(variant_name(v, style) + ": " + kernel, k.metrics);
      if (k.lines.empty()) continue;
      out += "\n" + heading(variant_name(v, style) + ": " + kernel + ", hot lines", style);
      TextTable lines({"line", "A", "B", "change"});
      const auto share = [](const std::optional<double>& s) {
        return s ? units::percent(*s) : std::string("-");
      };
      for (const auto& l : k.lines) {
        std::string where = fmt::format("{}:{}", shown(l.file, style), l.line);
        if (l.line_b != l.line && l.line_b > 0) where += fmt::format(" → :{}", l.line_b);
        lines.add_row({where, share(l.a), share(l.b),
                       l.a && l.b ? fmt::format("{:+.1f} pts", 100 * (*l.b - *l.a)) : "-"});
      }
      out += render(lines, style);
    }
    const bool any_findings = !v.findings_resolved.empty() || !v.findings_introduced.empty() ||
                              !v.findings_unchanged.empty();
    if (any_findings) {
      out += fmt::format(
          "{}findings of {}: resolved {}; introduced {}; unchanged {}\n", markdown ? "\n" : "",
          variant_name(v, style), list_or_none(v.findings_resolved, style),
          list_or_none(v.findings_introduced, style), list_or_none(v.findings_unchanged, style));
    }
    out += estimates_text(v, style);
  }
  return out;
}

std::string render_comparison_table(const std::vector<Comparison>& against_first,
                                    const Style& style) {
  if (against_first.empty()) return "";
  std::string out = "baseline: " + shown(against_first.front().label_a, style) + "\n";
  std::vector<std::string> warnings;
  std::vector<std::string> head{"variant", "baseline"};
  for (const auto& c : against_first) {
    head.push_back(shown(c.label_b, style));
    for (const auto& w : c.warnings)
      out += "warning: " + shown(c.label_b, style) + ": " + shown(w, style) + "\n";
  }
  TextTable table(head);
  const auto& first = against_first.front();
  for (std::size_t i = 0; i < first.variants.size(); ++i) {
    const auto& base = first.variants[i];
    std::vector<std::string> row{variant_name(base, style), timing_row_median(base.time_a)};
    for (const auto& c : against_first) {
      const VariantComparison* match = nullptr;
      for (const auto& v : c.variants)
        if (v.variant_a == base.variant_a) match = &v;
      row.push_back(match && match->time_b
                        ? fmt::format("{} {}", units::seconds(match->time_b->median),
                                      time_verdict(*match, style))
                        : "-");
    }
    table.add_row(row);
  }
  return out + "\n" + render(table, style);
}

nlohmann::json comparison_json(const std::vector<Comparison>& against_first) {
  nlohmann::json comparisons = nlohmann::json::array();
  for (const auto& c : against_first) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : c.variants) variants.push_back(variant_json(v));
    comparisons.push_back({{"a", c.label_a},
                           {"b", c.label_b},
                           {"warnings", c.warnings},
                           {"variants", std::move(variants)}});
  }
  return {{"schema", kCompareSchema},
          {"noise", {{"sigmas", kNoiseSigmas}, {"floor", kNoiseFloor}}},
          {"comparisons", std::move(comparisons)}};
}

}  // namespace gpulab::report
