#include "reports/render_diagnosis.hpp"

#include <fmt/format.h>

#include "reports/diagnosis.hpp"
#include "reports/format.hpp"
#include "reports/kernel_name.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab::report {
namespace {

std::string value_text(const Evidence& e) {
  if (!e.value) return "not measured";
  return fmtx::metric(*e.value, evidence_unit(e.metric));
}

// "dram_pct = 33.8% (>= 60.0%)"
std::string evidence_text(const std::vector<Evidence>& evidence) {
  std::string out;
  for (const auto& e : evidence) {
    if (!out.empty()) out += ", ";
    const auto* traits = metrics::find(e.metric);
    out += (traits ? traits->short_name : e.metric) + std::string(" = ") + value_text(e);
    if (!e.threshold.empty())
      out += fmt::format(" (threshold {} {})", e.relation,
                         fmtx::metric(e.threshold_value, evidence_unit(e.metric)));
  }
  return out;
}

std::string answer_text(const PathStep& s, const Style& style) {
  return s.finding.empty() ? s.answer : paint(s.answer + ": " + s.finding, Tone::warn, style);
}

std::string path_text(const Diagnosis& d, const Style& style) {
  std::string out;
  // Node names in a column three wider than the longest, so that the root (no branch prefix)
  // and its children ("├─ ") line up their questions.
  std::size_t width = 0;
  for (const auto& s : d.path) width = std::max(width, s.node.size() + 3);
  for (std::size_t i = 0; i < d.path.size(); ++i) {
    const auto& s = d.path[i];
    const bool last = i + 1 == d.path.size();
    const std::string branch = s.depth == 0 ? "" : (last ? "└─ " : "├─ ");
    const std::string cont = last ? "   " : "│  ";
    out += fmt::format("{:<{}}  {}\n", branch + s.node, width,
                       s.question);
    out += fmt::format("{}{:<{}}  {} → {}\n", cont, "", width - 3, evidence_text(s.evidence),
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
    out += fmt::format("  {}. {} [{}] {}\n", rank++, paint(f.id, tone, style), f.severity, f.title);
    out += "     evidence: " + evidence_text(f.evidence) + "\n";
    out += "     why: " + f.explanation + "\n";
    out += "     do:  " + f.recommendation + "\n";
    if (!f.labs.empty()) {
      std::string labs;
      for (const auto& l : f.labs) labs += (labs.empty() ? "" : ", ") + ("gpulab run " + l);
      out += "     see: " + labs + "\n";
    }
  }
  return out;
}

// The header line, the overrides, the path and the findings of one diagnosis.
std::string diagnosis_block(const std::string& title, const Diagnosis& d, const Style& style) {
  const bool markdown = style.table == TableStyle::markdown;
  const Style plain{};  // no colors inside Markdown code blocks
  const std::string principal = d.findings.empty() ? "none" : d.findings.front().id;
  std::string out = fmt::format("{}{} · verdict: {} · principal: {}\n", markdown ? "### " : "",
                                title, d.verdict, paint(principal, Tone::strong, style));
  if (!d.thresholds_overridden.empty()) {
    std::string t;
    for (const auto& [name, value] : d.thresholds_overridden)
      t += fmt::format("{}{}={}", t.empty() ? "" : ", ", name, value);
    out += "thresholds overridden: " + t + "\n";
  }
  if (markdown) return out + "\n```\n" + path_text(d, plain) + "```\n\n" + findings_text(d, plain);
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
    bool any = false;
    const bool timeline = v.timeline && v.timeline->diagnosis;
    if (timeline && (kernel.empty() || kernel == "timeline")) {
      any = true;
      add(diagnosis_block(fmt::format("{}/{} · timeline", report.lab.name, v.name),
                          *v.timeline->diagnosis, style));
    }
    for (const auto& k : v.kernels) {
      if (!kernel.empty() && !names_kernel(kernel, k.name, k.function)) continue;
      if (!k.diagnosis && timeline) continue;  // a traced lab's kernels without counters
      any = true;
      if (!k.diagnosis) {
        add(fmt::format("{}/{} · {}: not diagnosed: {}\n", report.lab.name, v.name,
                        kernel_heading(k.name, k.function),
                        v.counters.note.empty() ? "no counters in the report" : v.counters.note));
        continue;
      }
      add(diagnosis_block(
          fmt::format("{}/{} · {}", report.lab.name, v.name, kernel_heading(k.name, k.function)),
                          *k.diagnosis, style));
    }
    if (!any && v.status == VariantStatus::skipped)
      out += fmt::format("{}/{}: skipped: {}\n", report.lab.name, v.name, v.skip_reason);
  }
  return out;
}

}  // namespace gpulab::report
