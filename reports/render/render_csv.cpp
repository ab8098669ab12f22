#include "reports/render/render_csv.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "reports/render/escape.hpp"
#include "reports/report.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

std::string number(double v) { return fmt::format("{}", v); }

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// A cell a spreadsheet would run as a formula (OWASP, "CSV Injection"): text from a report (a
// kernel name, a program's argv) that starts with = + - @, a tab or a carriage return. Numbers of
// gpulab's own ("-0.25") are data.
bool formula_like(const std::string& text) {
  return !text.empty() && std::string("=+-@\t\r").find(text[0]) != std::string::npos &&
         !is_number(text);
}

}  // namespace

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    // Fields are often report-borne and CSV is often read on a terminal: no raw controls. A
    // formula-like cell is defused as OWASP recommends: a leading ' inside quotes.
    const bool formula = formula_like(fields[i]);
    const std::string f = (formula ? "'" : "") + terminal_safe(fields[i]);
    if (!formula && f.find_first_of(",\"\n\r") == std::string::npos) {
      line += f;
      continue;
    }
    line += '"';
    for (char c : f) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    line += '"';
  }
  return line + "\n";
}

std::string report_csv(const Report& r) {
  std::string out = csv_line({"lab", "variant", "kernel", "quantity", "value"});
  const auto row = [&](const std::string& variant, const std::string& kernel,
                       const std::string& quantity, const std::string& value) {
    out += csv_line({r.subject(), variant, kernel, quantity, value});
  };
  for (const auto& v : r.variants) {
    row(v.name, "", "status", to_string(v.status));
    row(v.name, "", "check", to_string(v.check.status));
    row(v.name, "", "check.max_abs_error", number(v.check.max_abs_error));
    if (v.timing.repeat > 0) {
      row(v.name, "", "time.median_s", number(v.timing.median));
      row(v.name, "", "time.min_s", number(v.timing.min));
      row(v.name, "", "time.max_s", number(v.timing.max));
    }
    if (v.effective_bandwidth > 0)
      row(v.name, "", "effective_bandwidth_Bps", number(v.effective_bandwidth));
    if (v.roof_fraction > 0) row(v.name, "", "roof_fraction", number(v.roof_fraction));
    if (v.speedup > 0) row(v.name, "", "speedup", number(v.speedup));
    if (v.timeline) {
      const auto& s = v.timeline->summary;
      for (const auto& figure : timeline_figures())
        row(v.name, "timeline", figure.name, number(figure.get(s)));
      for (const auto& rate : s.rates)
        row(v.name, "timeline",
            fmt::format("bandwidth_Bps.{}.{}", rate.direction, rate.host_memory),
            number(rate.bandwidth));
      if (v.timeline->diagnosis && !v.timeline->diagnosis->findings.empty())
        row(v.name, "timeline", "principal_finding", v.timeline->diagnosis->findings.front().id);
    }
    for (const auto& k : v.kernels) {
      const auto& a = k.attributes;
      if (a.block_threads > 0) {
        row(v.name, k.name, "registers_per_thread", number(a.registers_per_thread));
        row(v.name, k.name, "theoretical_occupancy", number(a.theoretical_occupancy));
      }
      for (const auto& [name, value] : k.metrics) row(v.name, k.name, name, number(value));
      for (const auto& [name, value] : k.derived) row(v.name, k.name, name, number(value));
      if (k.diagnosis && !k.diagnosis->findings.empty())
        row(v.name, k.name, "principal_finding", k.diagnosis->findings.front().id);
    }
  }
  return out;
}

std::string findings_csv(const Report& r) {
  std::string out =
      csv_line({"lab", "variant", "kernel", "verdict", "rank", "finding", "severity", "score"});
  const auto add = [&](const Variant& v, const std::string& where, const Diagnosis& d) {
    int rank = 1;
    for (const auto& f : d.findings)
      out += csv_line({r.subject(), v.name, where, d.verdict, std::to_string(rank++), f.id,
                       f.severity, number(f.score)});
  };
  for (const auto& v : r.variants) {
    if (v.timeline && v.timeline->diagnosis) add(v, "timeline", *v.timeline->diagnosis);
    for (const auto& k : v.kernels)
      if (k.diagnosis) add(v, k.name, *k.diagnosis);
  }
  return out;
}

std::string comparison_csv(const std::vector<Comparison>& against_first) {
  std::string out = csv_line({"a", "b", "lab", "variant_a", "variant_b", "median_a_s", "median_b_s",
                              "change", "noise", "verdict", "warnings"});
  for (const auto& c : against_first) {
    // What the text and JSON forms say above the table (different devices, parameters), on
    // every row of its comparison: a CSV has nowhere else to keep it.
    std::string warnings;
    for (const auto& w : c.warnings) warnings += (warnings.empty() ? "" : "; ") + w;
    for (const auto& v : c.variants) {
      // A variant on one side only has no change and no noise band: empty, not 0.
      const bool both = v.time_a && v.time_b;
      out += csv_line({c.label_a, c.label_b, v.lab, v.variant_a, v.variant_b,
                       v.time_a ? number(v.time_a->median) : "",
                       v.time_b ? number(v.time_b->median) : "", both ? number(v.change) : "",
                       both ? number(v.noise) : "", to_string(v.verdict), warnings});
    }
  }
  return out;
}

}  // namespace gpulab::report
