// One self-contained HTML file for one or more reports, or for a comparison: no script, no
// network, no external font or image; charts are inline SVG, styles are inline CSS that also
// prints. Every string taken from a report is escaped (html_safe, reports/render/escape.hpp).
//
// Per report: a header (device, measured roofs, tool, argv, when), the variants' times as bars
// with speedups and the share of the copy roof, the check results, a lab's best variant against
// its limit (reports/diagnosis/limits.hpp; several reports also get a table of them first), a
// roofline, every kernel's decision path and findings, and for traced variants the timeline as a
// Gantt chart per stream with its figures. For a comparison: the before/after times, the counter
// deltas and the findings resolved and introduced.
#pragma once

#include <string>
#include <vector>

#include "reports/diagnosis/compare.hpp"
#include "reports/render/render_source.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

struct HtmlPage {
  std::string title = "gpulab report";
  std::vector<std::string> argv;  // the command that made the page
  std::string generator;          // "gpulab 0.1.0 (sha)"
  // The texts of the kernels' source files, for their source views: the reports' own copies
  // only, when empty.
  SourceText source_text;
};

std::string render_html(const std::vector<Report>& reports, const HtmlPage& page);
// One before/after section per comparison (compare A B C... makes one per pair).
std::string render_html(const std::vector<Comparison>& comparisons, const HtmlPage& page);

}  // namespace gpulab::report
