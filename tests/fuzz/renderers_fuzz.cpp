// Every renderer on any report that loads: text and Markdown (the report, its diagnosis, its
// timelines), CSV, the HTML page with its SVG charts, the Perfetto trace, and a comparison of the
// report with itself. Each must end and stay bounded for any value a report can hold (zero,
// negative where allowed, denormal, 1e308); scripts/fuzz.sh runs it with a memory limit
// (-rss_limit_mb) and a time limit per input (-timeout), so that a loop that does not end or a
// chart that grows without bound is reported as a crash.
#include <cstdint>
#include <string>

#include "reports/base/errors.hpp"
#include "reports/diagnosis/compare.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/render/render_compare.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/render_text.hpp"
#include "reports/render/render_timeline.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

using namespace gpulab::report;

// What every renderer printed, summed, so that no call is optimized away.
std::size_t render_all(const Report& r) {
  std::size_t n = 0;
  for (const TableStyle table : {TableStyle::text, TableStyle::markdown}) {
    Style style;
    style.table = table;
    style.color = table == TableStyle::text;
    style.max_findings = 0;
    n += render_text(r, style).size() + render_diagnosis(r, style).size() +
         render_timelines(r, style).size();
  }
  n += report_csv(r).size() + findings_csv(r).size();
  n += render_html({r}, HtmlPage{}).size();
  // The trace is of the timelines; a report without one is refused (a UsageError) by design.
  bool traced = false;
  for (const auto& v : r.variants)
    if (v.timeline) {
      traced = true;
      n += timeline_chart(*v.timeline, 80).size();
    }
  if (traced) n += trace_events(r).dump().size();
  const auto itself = compare_reports(r, r, "a", "b");
  n += render_comparison(itself, Style{}).size() + render_html({itself}, HtmlPage{}).size() +
       comparison_csv({itself}).size();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gpulab::fuzz::InputFile input("report");
  Report report;
  try {
    report = load_report(input.write({reinterpret_cast<const char*>(data), size}));
    diagnose_report(report, Thresholds());
  } catch (const gpulab::UsageError&) {
    return 0;
  }
  static volatile std::size_t sink = 0;
  sink = sink + render_all(report);
  return 0;
}
