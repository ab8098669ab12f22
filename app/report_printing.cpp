// How `run`, `diagnose` and `profile` print a report on stdout in a --format, and the exit
// status it gives.
#include "app/report_printing.hpp"

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/limits.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_text.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/units.hpp"

namespace gpulab::app {

report::Style text_style(OutputFormat format, const Io& io, bool all_findings) {
  report::Style style;
  style.table =
      format == OutputFormat::markdown ? report::TableStyle::markdown : report::TableStyle::text;
  style.color = io.color && format == OutputFormat::text;
  if (all_findings) style.max_findings = 0;
  return style;
}

void print_report(const report::Report& report, OutputFormat format, Io& io, bool all_findings) {
  if (format == OutputFormat::json) {
    io.out << report::report_file_text(report);
  } else if (format == OutputFormat::csv) {
    io.out << report::report_csv(report);
  } else {
    const auto style = text_style(format, io, all_findings);
    io.out << report::render_text(report, style);
    if (report::has_diagnosis(report)) io.out << "\n" << report::render_diagnosis(report, style);
  }
  // Structured output keeps stdout clean: warnings (also inside the report) go to stderr.
  if (format == OutputFormat::json || format == OutputFormat::csv)
    for (const auto& w : report.warnings)
      io.err << "gpulab: warning: " << report::terminal_safe(w) << "\n";
}

int exit_code_of(const report::Report& report) {
  for (const auto& v : report.variants)
    if (v.check.status == report::CheckStatus::failed)
      return static_cast<int>(ExitCode::check_failed);
  return 0;
}

// The best (fastest checked) variant of each lab against its baseline, and against the lab's
// limit (reports/diagnosis/limits.hpp): reference implementations (cuBLAS, CUB) are what the lab's
// own variants are measured against, not candidates for its best.
std::string all_labs_summary(const std::vector<report::Report>& reports,
                             const report::Style& style) {
  report::TextTable table(
      {"lab", "baseline", "median", "best", "median", "speedup", "of limit", "checks"}, 2);
  for (const auto& r : reports) {
    const auto* base = r.baseline();
    const auto limit = report::lab_limit(r);
    const auto* best = limit.best;
    int passed = 0, total = 0, skipped = 0;
    for (const auto& v : r.variants) {
      if (v.status == report::VariantStatus::skipped) {
        ++skipped;
        continue;
      }
      ++total;
      if (v.check.status == report::CheckStatus::passed) ++passed;
    }
    const bool base_ran = base && base->status != report::VariantStatus::skipped;
    std::string checks = fmt::format("{}/{}", passed, total);
    if (skipped > 0) checks += fmt::format(", {} skipped", skipped);
    table.add_row(
        {r.subject(), base ? base->name : "-",
         base_ran ? report::units::seconds(base->timing.median)
         : base   ? "skipped"
                  : "-",
         best ? best->name : "-", best ? report::units::seconds(best->timing.median) : "-",
         best && best->speedup > 0 ? report::units::ratio(best->speedup) : "-", limit.text(),
         report::paint(checks, passed == total ? report::Tone::good : report::Tone::bad, style)});
  }
  return style.table == report::TableStyle::markdown ? table.render_markdown() : table.render();
}

}  // namespace gpulab::app
