// The HTML page and the trace-event file, on the reports recorded on the H200
// (tests/fixtures/labs) and on a hostile report made here.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "reports/base/errors.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/compare.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/limits.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_compare.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/roofline.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/timeline.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> lab_fixtures() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(GPULAB_FIXTURES_DIR) / "labs"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlSafe, EscapesMarkupAndControlCharacters) {
  EXPECT_EQ(html_safe("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_safe("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(html_safe("osc\xc2\x9d" "0;title"), "osc\\u009d0;title");
  EXPECT_EQ(html_safe("µs → ok"), "µs → ok");  // other UTF-8 stays
}

TEST(Roofline, Fp32PeakOfTheH200) {
  DeviceInfo d;
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_hz = 1.98e9;
  EXPECT_DOUBLE_EQ(fp32_peak_flops(d), 2.0 * 132 * 128 * 1.98e9);  // 66.9 TFLOP/s
  d.cc_major = 6;
  EXPECT_EQ(fp32_peak_flops(d), 0.0);  // unknown: no ceiling is drawn
}

TEST(Roofline, MatmulPointsUseMeasuredDramBytes) {
  const Report r = load_report((fs::path(GPULAB_FIXTURES_DIR) / "labs" / "matmul.json").string());
  const auto points = roofline_points(r);
  ASSERT_FALSE(points.empty());
  for (const auto& p : points) {
    EXPECT_TRUE(p.measured_bytes) << p.variant;
    EXPECT_GT(p.intensity, 0) << p.variant;
    // No variant beats the FP32 peak, and every one does real work.
    EXPECT_LT(p.attained, fp32_peak_flops(r.device)) << p.variant;
    EXPECT_GT(p.attained, 1e11) << p.variant;
  }
}

TEST(RenderHtml, EveryLabFixtureRendersWithItsSections) {
  for (const auto& path : lab_fixtures()) {
    const Report r = load_report(path.string());
    const std::string html = render_html({r}, HtmlPage{});
    SCOPED_TRACE(path.filename().string());
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("</html>"), std::string::npos);
    EXPECT_NE(html.find("id=\"lab-"), std::string::npos);
    EXPECT_EQ(count(html, "<svg"), count(html, "</svg>"));
    // One roofline point per variant that has FLOPs, none otherwise.
    EXPECT_EQ(count(html, "data-kind=\"roofline-point\""), roofline_points(r).size());
    // Self-contained: nothing is fetched.
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("src="), std::string::npos);
    EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
    for (const auto& v : r.variants) EXPECT_NE(html.find(html_safe(v.name)), std::string::npos);
  }
}

TEST(RenderHtml, EachLabShowsItsBestVariantAgainstItsLimit) {
  std::vector<Report> reports;
  for (const char* lab : {"transpose", "matmul", "reduction"})
    reports.push_back(
        load_report((fs::path(GPULAB_FIXTURES_DIR) / "labs" / lab).string() + ".json"));
  for (const auto& r : reports) {
    const std::string one = render_html({r}, HtmlPage{});
    const LabLimit l = lab_limit(r);
    ASSERT_TRUE(l.best) << r.subject();
    EXPECT_NE(one.find("best variant: <strong>" + l.best->name + "</strong>, " + l.text()),
              std::string::npos)
        << r.subject();
    EXPECT_EQ(one.find("<h2>Best variants</h2>"), std::string::npos) << "one report: no table";
  }
  const std::string all = render_html(reports, HtmlPage{});
  const auto table = all.find("<h2>Best variants</h2>");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(table, all.find("<section class=\"lab\""));
  EXPECT_NE(all.find("91.0% of copy roof", table), std::string::npos);
  EXPECT_NE(all.find("88.4% of cublas", table), std::string::npos);
  EXPECT_NE(all.find("102.4% of cub", table), std::string::npos);
}

TEST(RenderHtml, TracedVariantsGetAGanttChart) {
  const Report r = load_report((fs::path(GPULAB_FIXTURES_DIR) / "labs" / "streams.json").string());
  const std::string html = render_html({r}, HtmlPage{});
  std::size_t traced = 0, activities = 0;
  for (const auto& v : r.variants)
    if (v.timeline) ++traced, activities += v.timeline->activities.size();
  ASSERT_GT(traced, 0u);
  EXPECT_EQ(count(html, "<figure class=\"gantt\">"), traced);
  EXPECT_GE(count(html, "<rect"), activities);
}

// Two GPUs, each with a compute kernel and an NCCL kernel on stream 13: a row per GPU and
// stream, the collectives in a colour of their own, and the caption's communication figures.
TEST(RenderHtml, SeveralGpusGetARowPerGpuAndTheCollectivesAColourOfTheirOwn) {
  Report r;
  r.lab.name = "nccl";
  r.work.collective_bytes = 1e9;
  r.work.ranks = 2;
  auto& t = r.variants.emplace_back().timeline.emplace();
  for (std::uint32_t device : {0u, 1u})
    for (const char* name : {"gradient", "ncclDevKernel_AllReduce"}) {
      Activity& a = t.activities.emplace_back();
      a.name = name;
      a.stream = 13;
      a.device = device;
      a.start = name[0] == 'n' ? 1e-3 : 0;
      a.end = a.start + 1e-3;
    }
  summarize_timelines(r);
  const std::string html = render_html({r}, HtmlPage{});
  EXPECT_NE(html.find(">GPU 0 · stream 13<"), std::string::npos);
  EXPECT_NE(html.find(">GPU 1 · stream 13<"), std::string::npos);
  EXPECT_EQ(count(html, "class=\"communication\""), 2u);
  EXPECT_EQ(count(html, "class=\"kernel\""), 2u);
  EXPECT_NE(html.find("purple: NCCL's kernels"), std::string::npos);
  EXPECT_NE(html.find("Communication 1.00 ms per GPU, 0.0% of it under compute, bus bandwidth"),
            std::string::npos);
}

Report hostile() {
  Report r;
  r.lab = {"<script>alert(1)</script>", "t", "\x1b]0;pwned\x07"};
  r.device.name = "GPU\x1b[31m";
  r.device.roofs.copy_bandwidth = 1e12;
  r.work = {1e9, 1e9, 1e9};
  Variant v;
  v.name = "<img src=x onerror=alert(1)>";
  v.check.status = CheckStatus::passed;
  v.timing.median = 1e-3;
  Kernel k;
  k.name = "\"><script>x()</script>";
  k.function = "void k<'&'>(int)";
  k.derived["dram_bytes"] = 2e9;
  v.kernels.push_back(k);
  r.variants.push_back(v);
  return r;
}

// A kernel with per-instruction data gets its source view, its hot lines marked, and its findings
// name their lines; the text of a file the report did not embed comes from the page's reader.
TEST(RenderHtml, AKernelWithPerInstructionDataShowsItsSourceLines) {
  Report r =
      load_report(std::string(GPULAB_FIXTURES_DIR) + "/source/transpose_naive.hand-made.json");
  diagnose_report(r, Thresholds());
  HtmlPage page;
  page.source_text = [](const std::string& file) -> std::optional<std::string> {
    if (file != "labs/transpose.cu") return std::nullopt;
    std::string text;
    for (int n = 1; n <= 50; ++n) text += "line " + std::to_string(n) + " <of> the file\n";
    return text;
  };
  const std::string html = render_html({r}, page);
  EXPECT_EQ(count(html, "<figure class=\"source\">"), 1u);
  EXPECT_GE(count(html, "<span class=\"hot\">"), 2u) << "the hot line, above and in the file";
  EXPECT_NE(html.find("line 45 &lt;of&gt; the file"), std::string::npos) << "escaped";
  EXPECT_NE(html.find("of the global sectors beyond 4 per request"), std::string::npos);
  // Without a reader, the lines by number only.
  EXPECT_NE(render_html({r}, HtmlPage()).find("(source not found"), std::string::npos);
}

TEST(RenderHtml, StringsFromAReportCannotInjectMarkup) {
  const std::string html = render_html({hostile()}, HtmlPage{});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\x07'), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("k&lt;&#39;&amp;&#39;&gt;"), std::string::npos);
}

TEST(RenderHtml, AProgramsNvtxRangesAreATreeWithTheirShare) {
  Report r;
  r.program.emplace();
  r.program->argv = {"train"};
  r.program->kernel_seconds = 4e-3;
  r.program->ranges = {{"step", 4, 3e-3}, {"step/fwd<b>", 2, 1e-3}};
  Variant& v = r.variants.emplace_back();
  v.name = "gemm";
  v.role = Role::function;
  Kernel& k = v.kernels.emplace_back();
  k.name = "gemm";
  k.nvtx_path = "step/fwd<b>";
  const std::string html = render_html({r}, HtmlPage{});
  EXPECT_NE(html.find("<h3>NVTX ranges</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("style=\"padding-left: 0.3em\">step</td><td class=\"num\">4</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("style=\"padding-left: 1.5em\">fwd&lt;b&gt;</td>"), std::string::npos);
  EXPECT_NE(html.find("75.0%"), std::string::npos) << "3 ms of 4 ms";
  EXPECT_NE(html.find(" · NVTX step/fwd&lt;b&gt;"), std::string::npos) << "the launch's path";
  EXPECT_EQ(html.find("<b>"), std::string::npos);
}

TEST(RenderHtml, AnUnknownDeviceIsUnknownNotZero) {
  Report r;
  r.lab.name = "lab";
  const std::string html = render_html({r}, HtmlPage{});
  EXPECT_NE(html.find("<dt>device</dt><dd>unknown</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dd>copy not measured; FP32 unknown</dd>"), std::string::npos);
  EXPECT_EQ(html.find("sm_00"), std::string::npos);
}

TEST(RenderHtml, ComparisonShowsTimesDeltasAndFindings) {
  const std::string dir = std::string(GPULAB_FIXTURES_DIR);
  const Report a = load_report(dir + "/transpose_h200.json");
  const Report b = load_report(dir + "/transpose_4096_h200.json");
  const auto c = compare_variants(a, "naive", "padded", "transpose_h200.json");
  const std::string html = render_html(std::vector<Comparison>{c}, HtmlPage{});
  EXPECT_NE(html.find("<section class=\"comparison\">"), std::string::npos);
  EXPECT_NE(html.find("naive → padded"), std::string::npos);
  EXPECT_NE(html.find("findings resolved:"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"deltas\">"), std::string::npos);
  const auto two = compare_reports(a, b, "a.json", "b.json");
  EXPECT_EQ(count(render_html(std::vector<Comparison>{c, two}, HtmlPage{}),
                  "<section class=\"comparison\">"),
            2u);
}

// The page shows a metric's value with its unit, as the text does (one formatting for both),
// and names an added or removed variant by the side that has it.
TEST(RenderHtml, ComparisonValuesCarryTheirUnitsAndOneSidedVariantsTheirName) {
  const std::string dir = std::string(GPULAB_FIXTURES_DIR);
  const Report a = load_report(dir + "/transpose_h200.json");
  const auto c = compare_variants(a, "naive", "padded", "transpose_h200.json");
  const std::string html = render_html(std::vector<Comparison>{c}, HtmlPage{});
  const std::string text = render_comparison(c, Style{});
  for (const auto& k : c.variants.at(0).kernels)
    for (const auto& m : k.metrics) {
      if (!m.a) continue;
      const std::string shown = units::metric(*m.a, unit_of(m.name));
      EXPECT_NE(html.find("<td class=\"num\">" + shown + "</td>"), std::string::npos)
          << m.name << ": " << shown;
      EXPECT_NE(text.find(shown), std::string::npos) << m.name << ": " << shown;
    }
  EXPECT_NE(html.find("%</td>"), std::string::npos) << "occupancy as a percentage";

  Report fewer = a;
  fewer.variants.pop_back();
  const auto one_sided = compare_reports(a, fewer, "a.json", "b.json");
  const std::string page = render_html(std::vector<Comparison>{one_sided}, HtmlPage{});
  const std::string removed = a.variants.back().name;
  EXPECT_NE(page.find("transpose/" + removed + "<"), std::string::npos) << page;
  EXPECT_EQ(page.find("transpose/ →"), std::string::npos);
  EXPECT_EQ(page.find("→ <"), std::string::npos);
}

TEST(TraceEvents, StreamsTimelineInPerfettosFields) {
  const Report r = load_report((fs::path(GPULAB_FIXTURES_DIR) / "labs" / "streams.json").string());
  const auto trace = trace_events(r);
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::size_t complete = 0, activities = 0, process_names = 0, thread_names = 0;
  for (const auto& v : r.variants)
    if (v.timeline) activities += v.timeline->activities.size();
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e["ts"].is_number() && e["dur"].is_number());
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      EXPECT_TRUE(e.contains("tid") && e.contains("cat") && e["args"].is_object());
      const std::string cat = e["cat"];
      EXPECT_TRUE(cat == "kernel" || cat == "copy" || cat == "memset" || cat == "migration");
      if (cat == "copy") EXPECT_GT(e["args"]["bytes"].get<double>(), 0.0);
    } else {
      EXPECT_EQ(e["ph"], "M");
      process_names += e["name"] == "process_name";
      thread_names += e["name"] == "thread_name";
    }
  }
  EXPECT_EQ(complete, activities);
  EXPECT_GE(process_names, 1u);
  EXPECT_GE(thread_names, process_names);
}

// Stream ids are per GPU: with activities on two GPUs, each row is a (GPU, stream) pair.
TEST(TraceEvents, SeveralGpusGetARowPerGpuAndStream) {
  Report r;
  r.lab.name = "nccl";
  auto& t = r.variants.emplace_back().timeline.emplace();
  for (std::uint32_t device : {0u, 1u}) {
    Activity& a = t.activities.emplace_back();
    a.name = "ncclDevKernel_AllReduce";
    a.stream = 13;
    a.device = device;
    a.end = 1e-3;
  }
  const auto trace = trace_events(r);
  std::set<std::string> rows;
  std::set<std::uint64_t> tids;
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] == "thread_name") rows.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") tids.insert(e["tid"].get<std::uint64_t>());
  }
  EXPECT_EQ(rows, (std::set<std::string>{"GPU 0 · stream 13", "GPU 1 · stream 13"}));
  EXPECT_EQ(tids.size(), 2u);
}

TEST(TraceEvents, AReportWithoutATimelineIsAUsageError) {
  const Report r = load_report((fs::path(GPULAB_FIXTURES_DIR) / "labs" / "transpose.json").string());
  EXPECT_THROW(trace_events(r), UsageError);
}

}  // namespace
}  // namespace gpulab::report
