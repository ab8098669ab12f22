#include "reports/render_diagnosis.hpp"

#include <fmt/format.h>

#include "reports/diagnosis.hpp"
#include "reports/escape.hpp"
#include "reports/kernel_name.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

std::string value_text(const Evidence& e) {
  if (!e.value) return "not measured";
  return units::metric(*e.value, evidence_unit(e.metric));
}

// "dram_pct = 33.8% (>= 60.0%)"
std::string evidence_text(const std::vector<Evidence>& evidence, const Style& style) {
  std::string out;
  for (const auto& e : evidence) {
    if (!out.empty()) out += ", ";
    const auto* traits = metrics::find(e.metric);
    out += shown(traits ? traits->short_name : e.metric, style) + " = " + value_text(e);
    if (!e.threshold.empty())
      out += fmt::format(" (threshold {} {})", shown(e.relation, style),
                         units::metric(e.threshold_value, evidence_unit(e.metric)));
  }
  return out;
}

std::string answer_text(const PathStep& s, const Style& style) {
  const std::string answer = shown(s.answer, style);
  return s.finding.empty() ? answer
                           : paint(answer + ": " + shown(s.finding, style), Tone::warn, style);
}

std::string path_text(const Diagnosis& d, const Style& style) {
  std::string out;
  // Node names in a column three wider than the longest, so that the root (no branch prefix)
  // and its children ("├─ ") line up their questions.
  std::size_t width = 0;
  for (const auto& s : d.path) width = std::max(width, shown(s.node, style).size() + 3);
  for (std::size_t i = 0; i < d.path.size(); ++i) {
    const auto& s = d.path[i];
    const bool last = i + 1 == d.path.size();
    const std::string branch = s.depth == 0 ? "" : (last ? "└─ " : "├─ ");
    const std::string cont = last ? "   " : "│  ";
    out +=
        fmt::format("{:<{}}  {}\n", branch + shown(s.node, style), width, shown(s.question, style));
    out += fmt::format("{}{:<{}}  {} → {}\n", cont, "", width - 3, evidence_text(s.evidence, style),
                       answer_text(s, style));
  }
  return out;
}

std::string findings_text(const Diagnosis& d, const Style& style) {
  if (d.findings.empty()) return "findings: none\n";
  std::string out = "findings (principal first):\n";
  int rank = 1;
  for (const auto& f : d.findings) {
    const Tone tone = f.severity == "high" ? Tone::bad : (f.severity == "medium" ? Tone::warn : Tone::strong);
    out += fmt::format("  {}. {} [{}] {}\n", rank++, paint(shown(f.id, style), tone, style),
                       shown(f.severity, style), shown(f.title, style));
    out += "     evidence: " + evidence_text(f.evidence, style) + "\n";
    out += "     why: " + shown(f.explanation, style) + "\n";
    out += "     do:  " + shown(f.recommendation, style) + "\n";
    if (!f.labs.empty()) {
      std::string labs;
      for (const auto& l : f.labs)
        labs += (labs.empty() ? "" : ", ") + ("gpulab run " + shown(l, style));
      out += "     see: " + labs + "\n";
    }
  }
  return out;
}

// The header line, the overrides, the path and the findings of one diagnosis. `title` is
// already shown() for this style.
std::string diagnosis_block(const std::string& title, const Diagnosis& d, const Style& style) {
  const bool markdown = style.table == TableStyle::markdown;
  const std::string principal = d.findings.empty() ? "none" : d.findings.front().id;
  std::string out =
      fmt::format("{}{} · verdict: {} · principal: {}\n", markdown ? "### " : "", title,
                  shown(d.verdict, style), paint(shown(principal, style), Tone::strong, style));
  if (!d.thresholds_overridden.empty()) {
    std::string t;
    for (const auto& [name, value] : d.thresholds_overridden)
      t += fmt::format("{}{}={}", t.empty() ? "" : ", ", shown(name, style), value);
    out += "thresholds overridden: " + t + "\n";
  }
  // Inside a code block Markdown escapes would show literally: there the path is only made
  // terminal-safe (and has no colors), and the fence outgrows any backticks in it.
  if (markdown)
    return out + "\n" + markdown_code_block(path_text(d, Style{})) + "\n" + findings_text(d, style);
  return out + "\n" + path_text(d, style) + "\n" + findings_text(d, style);
}

}  // namespace

// A traced variant shows its timeline's diagnosis first (`kernel` "timeline" selects it
// alone); its kernels follow when they have counters.
std::string render_diagnosis(const Report& report, const std::string& variant,
                             const std::string& kernel, const Style& style) {
  std::string out;
  const auto add = [&](const std::string& block) { out += (out.empty() ? "" : "\n") + block; };
  for (const auto& v : report.variants) {
    if (!variant.empty() && v.name != variant) continue;
    const std::string where = shown(report.subject() + "/" + v.name, style);
    bool any = false;
    const bool timeline = v.timeline && v.timeline->diagnosis;
    if (timeline && (kernel.empty() || kernel == "timeline")) {
      any = true;
      add(diagnosis_block(where + " · timeline", *v.timeline->diagnosis, style));
    }
    for (const auto& k : v.kernels) {
      if (!kernel.empty() && !names_kernel(kernel, k.name, k.function)) continue;
      if (!k.diagnosis && timeline) continue;  // a traced lab's kernels without counters
      any = true;
      if (!k.diagnosis) {
        add(fmt::format(
            "{} · {}: not diagnosed: {}\n", where, shown(kernel_heading(k.name, k.function), style),
            v.counters.note.empty() ? "no counters in the report" : shown(v.counters.note, style)));
        continue;
      }
      add(diagnosis_block(where + " · " + shown(kernel_heading(k.name, k.function), style),
                          *k.diagnosis, style));
    }
    if (!any && v.status == VariantStatus::skipped)
      out += fmt::format("{}: skipped: {}\n", where, shown(v.skip_reason, style));
  }
  return out;
}

}  // namespace gpulab::report
