#include "reports/render/render_diagnosis.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "reports/diagnosis/diagnosis.hpp"
#include "reports/kernel_name.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/render/escape.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

std::string value_text(const Evidence& e) {
  if (!e.value) return "not measured";
  return units::metric(*e.value, evidence_unit(e.metric));
}

}  // namespace

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

namespace {

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
  const std::size_t shown_count = style.max_findings > 0
                                      ? std::min(d.findings.size(), std::size_t(style.max_findings))
                                      : d.findings.size();
  for (std::size_t i = 0; i < shown_count; ++i) {
    const auto& f = d.findings[i];
    const Tone tone =
        f.severity == "high" ? Tone::bad : (f.severity == "medium" ? Tone::warn : Tone::strong);
    out += fmt::format("  {}. {} [{}] {}\n", i + 1, paint(shown(f.id, style), tone, style),
                       shown(f.severity, style), shown(f.title, style));
    out += "     evidence: " + evidence_text(f.evidence, style) + "\n";
    if (!f.detail.empty()) out += "     cause: " + shown(f.detail, style) + "\n";
    for (const auto& l : f.lines)
      out += fmt::format("     at {}:{}: {} of {}{}\n", shown(l.file, style), l.line,
                         units::percent(l.share), shown(l.what, style),
                         l.detail.empty() ? "" : ", " + shown(l.detail, style));
    if (f.estimate) out += "     worth: " + estimate_text(*f.estimate) + "\n";
    out += "     why: " + shown(f.explanation, style) + "\n";
    out += "     do:  " + shown(f.recommendation, style) + "\n";
    if (!f.false_if.empty()) out += "     false if: " + shown(f.false_if, style) + "\n";
    if (!f.labs.empty()) {
      std::string labs;
      for (const auto& l : f.labs)
        labs += (labs.empty() ? "" : ", ") + ("gpulab run " + shown(l, style));
      out += "     see: " + labs + "\n";
    }
  }
  if (shown_count < d.findings.size()) {
    std::string rest;
    for (std::size_t i = shown_count; i < d.findings.size(); ++i)
      rest += (rest.empty() ? "" : ", ") + shown(d.findings[i].id, style);
    out += fmt::format("  + {} more: {} (--all-findings shows them)\n",
                       d.findings.size() - shown_count, rest);
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
  for (const auto& caveat : d.caveats) out += "caveat: " + shown(caveat, style) + "\n";
  // Inside a code block Markdown escapes would show literally: there the path is only made
  // terminal-safe (and has no colors), and the fence outgrows any backticks in it.
  if (markdown)
    return out + "\n" + markdown_code_block(path_text(d, Style{})) + "\n" + findings_text(d, style);
  return out + "\n" + path_text(d, style) + "\n" + findings_text(d, style);
}

// A share of the GPU time that neither rounds a sliver away nor a near-whole up to all of it.
std::string share_text(double share) {
  if (share > 0 && share < 0.001) return "under 0.1%";
  if (share < 1 && share > 0.999) return "over 99.9%";
  return units::percent(share);
}

// "uncoalesced-global (transpose_naive, 96.1% of the GPU time)"
std::string principal_text(const Principal& p, bool with_share, const Style& style) {
  if (p.finding.empty()) return "none";
  std::string where = shown(p.where, style);
  if (with_share) where += ", " + share_text(p.share) + " of the GPU time";
  return paint(shown(p.finding, style), Tone::strong, style) + " (" + where + ")";
}

// "2 kernels, 1.3% of the GPU time, not diagnosed: a, b (...)"; empty when there are none.
std::string undiagnosed_text(const Undiagnosed& u, const char* what, const char* how,
                             const Style& style) {
  if (u.functions == 0) return "";
  std::string names;
  for (const auto& n : u.names) names += (names.empty() ? "" : ", ") + shown(n, style);
  return fmt::format(
      "{} {}{}, {} of the GPU time, not diagnosed (under "
      "diagnosis.min_time_share): {} ({})\n",
      u.functions, what, u.functions == 1 ? "" : "s", share_text(u.share), names, how);
}

// A function launched several times is shown through its longest diagnosed launch (the first);
// the others are counted with their principal findings.
std::string other_launches_text(const std::vector<const Kernel*>& launches, const Style& style) {
  std::map<std::string, int> principals;
  for (std::size_t i = 1; i < launches.size(); ++i) {
    const Diagnosis& d = *launches[i]->diagnosis;
    ++principals[d.findings.empty() ? "none" : d.findings.front().id];
  }
  std::string list;
  for (const auto& [id, n] : principals)
    list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", shown(id, style), n);
  return fmt::format("{} more diagnosed launch{} of this function, principal findings: {}\n",
                     launches.size() - 1, launches.size() == 2 ? "" : "es", list);
}

// A program's function is a variant whose name is the function's whole display name, made
// unique with " #2" where two display names are the same: headings show it once, cut to a line,
// with that suffix kept.
std::string program_function_title(const Variant& v) {
  constexpr std::size_t kWidth = 100;
  const std::string display = display_name(v.description);
  const std::string suffix = v.name.size() > display.size() && v.name.rfind(display, 0) == 0
                                 ? v.name.substr(display.size())
                                 : "";
  return shortened(display, kWidth) + suffix;
}

std::string variant_text(const Report& report, const Variant& v, const Style& style) {
  const bool markdown = style.table == TableStyle::markdown;
  const std::string where =
      shown(report.subject() + "/" + (report.program ? program_function_title(v) : v.name), style);
  std::string out;
  const auto add = [&](const std::string& block) { out += (out.empty() ? "" : "\n") + block; };
  const bool timeline = v.timeline && v.timeline->diagnosis;
  const auto groups = diagnosed_functions(v);
  // With one diagnosed function and nothing else, its heading already names the principal.
  const Undiagnosed small = undiagnosed_kernels(v);
  if (groups.size() + (timeline ? 1 : 0) > 1 || (!groups.empty() && small.functions > 0)) {
    add(fmt::format("{}{} · principal: {}\n", markdown ? "## " : "", where,
                    principal_text(variant_principal(v), !v.totals, style)) +
        undiagnosed_text(small, "kernel", "--kernel NAME diagnoses one", style));
  }
  if (timeline) add(diagnosis_block(where + " · timeline", *v.timeline->diagnosis, style));
  for (const auto& launches : groups) {
    const Kernel& k = *launches.front();
    const std::string heading =
        report.program ? where : where + " · " + shown(kernel_heading(k.name, k.function), style);
    std::string block = diagnosis_block(heading, *k.diagnosis, style);
    if (launches.size() > 1) block += other_launches_text(launches, style);
    add(block);
  }
  if (timeline || !groups.empty()) return out;
  // Nothing diagnosed: say why, once for the variant.
  if (v.status == VariantStatus::skipped)
    return fmt::format("{}: skipped: {}\n", where, shown(v.skip_reason, style));
  const bool counted = std::any_of(v.kernels.begin(), v.kernels.end(),
                                   [](const Kernel& k) { return !k.metrics.empty(); });
  if (counted)  // too small a share: a program's function is in the program's line
    return report.program
               ? ""
               : where + ": " +
                     undiagnosed_text(small, "kernel", "--kernel NAME diagnoses one", style);
  if (v.kernels.empty() && !v.timeline) return "";
  return fmt::format(
      "{}: not diagnosed: {}\n", where,
      v.counters.note.empty() ? "no counters in the report" : shown(v.counters.note, style));
}

// The rules no kernel's counters could answer, with the metric set that would: once for the
// report, not as one "not measured" per metric.
std::string not_evaluated_text(const std::vector<RuleNotEvaluated>& rules, const Style& style) {
  std::vector<std::pair<std::string, std::string>> by_set;  // metric set, its rules' nodes
  for (const auto& r : rules) {
    auto it = std::find_if(by_set.begin(), by_set.end(),
                           [&](const auto& entry) { return entry.first == r.metric_set; });
    if (it == by_set.end()) it = by_set.insert(by_set.end(), {r.metric_set, ""});
    it->second += (it->second.empty() ? "" : ", ") + r.rule->node;
  }
  // The smallest set first; rules no set measures last.
  const auto rank = [](const std::string& set) {
    return set == "basic" ? 0 : set == "stalls" ? 1 : set == "full" ? 2 : 3;
  };
  std::stable_sort(by_set.begin(), by_set.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  std::string out;
  for (const auto& [set, nodes] : by_set)
    out += fmt::format("{}{} ({})", out.empty() ? "" : "; ", nodes,
                       set.empty() ? "no metric set measures them"
                                   : fmt::format("--metrics {} measures them", set));
  if (out.empty()) return "";
  return paint("rules not evaluated for want of counters:", Tone::warn, style) + " " + out + "\n";
}

}  // namespace

std::string render_diagnosis(const Report& report, const Style& style) {
  std::string out;
  const auto add = [&](const std::string& block) {
    if (!block.empty()) out += (out.empty() ? "" : "\n") + block;
  };
  if (report.program && has_diagnosis(report)) {
    const bool markdown = style.table == TableStyle::markdown;
    std::string ranges;
    for (const auto& r : range_principals(report))
      ranges += fmt::format("  in NVTX range {}: {}, {} of the range's profiled GPU time\n",
                            shown(r.range, style), principal_text(r.principal, false, style),
                            share_text(r.principal.share));
    add(fmt::format("{}{} · principal: {}\n", markdown ? "# " : "", shown(report.subject(), style),
                    principal_text(program_principal(report), true, style)) +
        ranges +
        undiagnosed_text(undiagnosed_functions(report), "function",
                         "--kernel diagnoses them whatever their share", style));
  }
  for (const auto& v : report.variants) add(variant_text(report, v, style));
  add(not_evaluated_text(rules_not_evaluated(report), style));
  return out;
}

std::string estimate_text(const Estimate& e) {
  const std::string basis = e.model == "roof"   ? "its work's bytes at the measured copy roof"
                            : e.model == "tail" ? "the grid in whole waves"
                                                : e.model + " model";
  return fmt::format("est. {:.1f}× faster if fixed ({})", e.speedup(), basis);
}

}  // namespace gpulab::report
