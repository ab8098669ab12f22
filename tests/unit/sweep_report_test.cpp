// The sweep report: where the principal finding changes along each axis, the text table and
// sparklines, CSV and JSON, on two reports of the transpose lab recorded on the H200 at 4096²
// and 8192² (tests/fixtures/transpose_4096_h200.json, transpose_h200.json), diagnosed here; and
// a sweep `gpulab sweep` recorded on an H100 (tests/fixtures/sweeps/vectorize-h100.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/outputs.hpp"
#include "reports/base/input_file.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/principal.hpp"
#include "reports/render/render_sweep.hpp"
#include "reports/render/render_sweep_html.hpp"
#include "reports/report_json.hpp"
#include "reports/sweep_findings.hpp"
#include "reports/sweep_json.hpp"
#include "unit/run_binary.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::report {
namespace {

Report diagnosed(const std::string& name) {
  Report r = load_report(std::string(GPULAB_FIXTURES_DIR) + "/" + name);
  derive_all(r);
  diagnose_report(r, {});
  return r;
}

// size 4096, 8192: the two recordings, as a sweep of the lab's size would hold them.
Sweep transpose_sweep(bool diagnose = true) {
  Sweep s;
  s.lab = "transpose";
  s.axes = {{"size", {4096, 8192}}};
  s.points.push_back(
      {{{"size", 4096}},
       diagnose ? diagnosed("transpose_4096_h200.json")
                : load_report(std::string(GPULAB_FIXTURES_DIR) + "/transpose_4096_h200.json")});
  s.points.push_back(
      {{{"size", 8192}},
       diagnose ? diagnosed("transpose_h200.json")
                : load_report(std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json")});
  return s;
}

TEST(SweepFindings, EachVariantHasOneCourseAlongTheAxisWithItsPrincipalFindingAtEachPoint) {
  const Sweep s = transpose_sweep();
  const auto courses = finding_courses(s);
  ASSERT_EQ(courses.size(), s.points[0].report.variants.size());
  for (const auto& c : courses) {
    EXPECT_EQ(c.axis, "size");
    EXPECT_TRUE(c.held.empty());
    ASSERT_FALSE(c.runs.empty());
    EXPECT_EQ(c.runs.front().first, 4096);
    EXPECT_EQ(c.runs.back().last, 8192);
    const Variant* at_8192 = s.points[1].report.find_variant(c.variant);
    ASSERT_NE(at_8192, nullptr);
    EXPECT_EQ(c.runs.back().finding, principal_finding(*at_8192)) << c.variant;
  }
}

TEST(SweepFindings, NoCourseWithoutADiagnosis) {
  EXPECT_TRUE(finding_courses(transpose_sweep(false)).empty());
}

TEST(SweepFindings, TheProductGivesACourseAlongEachAxisForEachValueOfTheOther) {
  Sweep s = transpose_sweep();
  // size x a second axis of two values: each report stands for the point it was recorded at.
  Sweep grid;
  grid.lab = s.lab;
  grid.axes = {{"size", {4096, 8192}}, {"tile", {16, 32}}};
  for (const auto& p : s.points)
    for (std::int64_t tile : {16, 32})
      grid.points.push_back({{{"size", p.at.at("size")}, {"tile", tile}}, p.report});
  const auto courses = finding_courses(grid);
  const std::size_t variants = s.points[0].report.variants.size();
  ASSERT_EQ(courses.size(), variants * 4)
      << "along size at tile 16 and 32, along tile at 4096 and 8192";
  EXPECT_EQ(courses[0].axis, "size");
  EXPECT_EQ(courses[0].held, (SweepPoint{{"tile", 16}}));
  EXPECT_EQ(courses[1].held, (SweepPoint{{"tile", 32}}));
  EXPECT_EQ(courses[2].axis, "tile");
  EXPECT_EQ(courses[2].held, (SweepPoint{{"size", 4096}}));
  EXPECT_EQ(courses[2].runs.size(), 1u) << "the same report at both tiles: no change";
  EXPECT_EQ(courses[2].runs[0].first, 16);
  EXPECT_EQ(courses[2].runs[0].last, 32);

  grid.zip = true;
  EXPECT_EQ(finding_courses(grid).size(), variants) << "zipped axes move together: one course";
}

TEST(SweepFindings, DescribeSaysWhereTheFindingChanges) {
  FindingCourse c{"padded", "size", {}, {{"memory-bound-at-roof", 1024, 2048}}};
  EXPECT_EQ(describe(c), "padded: memory-bound-at-roof at every size");
  c.runs.push_back({"memory-bound-below-roof", 4096, 4096});
  c.runs.push_back({"latency-bound", 1 << 20, 1 << 30});
  c.held = {{"block", 128}};
  EXPECT_EQ(describe(c),
            "at block=128: padded: memory-bound-at-roof up to size 2048, "
            "memory-bound-below-roof at size 4096, latency-bound from size 1Mi");
  c.runs[1].last = 8192;
  EXPECT_NE(describe(c).find("memory-bound-below-roof from size 4096 to 8192"), std::string::npos);
}

TEST(SweepFindings, AxisValuesReadAsTyped) {
  EXPECT_EQ(axis_value(2048), "2048") << "below 1Mi, the number";
  EXPECT_EQ(axis_value(1 << 20), "1Mi");
  EXPECT_EQ(axis_value((3 << 20) + 1024), "3073Ki");
  EXPECT_EQ(axis_value(std::int64_t{1} << 30), "1Gi");
  EXPECT_EQ(axis_value((1 << 20) + 1), "1048577");
  EXPECT_EQ(axis_value(-5), "-5");
}

TEST(SweepText, ATableOfTimesAndBandwidthsTheFindingsAndASparklinePerVariant) {
  Sweep s = transpose_sweep();
  const std::string text = render_sweep_text(s, Style{});
  EXPECT_NE(text.find("sweep transpose: size 4096 to 8192 (2 values); 2 points"), std::string::npos)
      << text;
  EXPECT_NE(text.find("median time"), std::string::npos);
  EXPECT_NE(text.find("effective bandwidth"), std::string::npos);
  EXPECT_NE(text.find("the principal finding along each axis:"), std::string::npos);
  for (const auto& v : s.points[0].report.variants) EXPECT_NE(text.find(v.name), std::string::npos);
  EXPECT_NE(text.find("effective bandwidth at each point, in order:"), std::string::npos);
  EXPECT_EQ(text.find('*'), std::string::npos) << "no timing stopped on its timeout";

  s.points[1].report.variants[0].timing.stopped = TimingStop::timeout;
  const std::string marked = render_sweep_text(s, Style{});
  EXPECT_NE(marked.find("* the noise stayed above the target"), std::string::npos);

  EXPECT_EQ(render_sweep_text(s, Style{}, 20).find("at each point, in order"), std::string::npos)
      << "no sparklines where they do not fit";
  Style md;
  md.table = TableStyle::markdown;
  EXPECT_NE(render_sweep_text(s, md).find("| size |"), std::string::npos);
}

TEST(SweepText, SparklinesScaleFromTheSmallestValueToTheLargest) {
  EXPECT_EQ(sparkline({1, 2, 3, 4, 5, 6, 7, 8}), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(sparkline({5, 0, 10}), "▁ █") << "an absent value is a space";
  EXPECT_EQ(sparkline({3, 3}), "▅▅") << "all equal: the middle";
  EXPECT_EQ(sparkline({}), "");
}

TEST(SweepCsv, OneRowPerPointAndVariantWithTheAxesAsNumbers) {
  const Sweep s = transpose_sweep();
  const std::string csv = sweep_csv(s);
  EXPECT_EQ(csv.rfind("size,variant,role,status,median_s,min_s,max_s,stddev_s,samples,stopped,"
                      "effective_bandwidth_Bps,roof_fraction,speedup,principal_finding\n",
                      0),
            0u)
      << csv;
  const std::size_t rows = std::count(csv.begin(), csv.end(), '\n') - 1;
  EXPECT_EQ(rows, 2 * s.points[0].report.variants.size());
  const auto& v = s.points[1].report.variants[0];
  EXPECT_NE(csv.find("\n8192," + v.name + "," + to_string(v.role) + ",ok," +
                     fmt::format("{}", v.timing.median)),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",20,count,"), std::string::npos) << "20 samples of a fixed count";
}

TEST(SweepJson, TheAxesAndEveryPointsWholeReport) {
  const Sweep s = transpose_sweep();
  const auto j = to_json(s);
  EXPECT_EQ(j["schema"], kSweepSchema);
  EXPECT_EQ(j["lab"], "transpose");
  EXPECT_EQ(j["axes"][0]["name"], "size");
  EXPECT_EQ(j["axes"][0]["values"], (std::vector<std::int64_t>{4096, 8192}));
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][1]["at"]["size"], 8192);
  EXPECT_EQ(j["points"][1]["report"]["schema"], kSchema);
  // Each point's report reads back as the report it is.
  const Report back = from_json(j["points"][0]["report"]);
  EXPECT_EQ(back.variants.size(), s.points[0].report.variants.size());
  EXPECT_DOUBLE_EQ(back.variants[0].timing.median, s.points[0].report.variants[0].timing.median);
  std::size_t changes = 0;
  for (const auto& c : finding_courses(s)) changes += c.changes();
  EXPECT_EQ(j["finding_changes"].size(), changes);
  EXPECT_EQ(sweep_file_text(s).back(), '\n');
}

std::string refusal(const nlohmann::json& doc) {
  try {
    sweep_from_document(doc, "s.json");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SweepJson, ReadsBackWhatItWroteAndRefusesWhatIsNotASweep) {
  const Sweep s = transpose_sweep();
  const auto j = to_json(s);
  EXPECT_TRUE(is_sweep(j));
  EXPECT_FALSE(is_sweep(j["points"][0]["report"]));
  const Sweep back = sweep_from_document(j, "s.json");
  EXPECT_EQ(back.lab, "transpose");
  ASSERT_EQ(back.axes.size(), 1u);
  EXPECT_EQ(back.axes[0].values, s.axes[0].values);
  ASSERT_EQ(back.points.size(), 2u);
  EXPECT_EQ(back.points[1].at, (SweepPoint{{"size", 8192}}));
  EXPECT_DOUBLE_EQ(back.points[1].report.variants[0].timing.median,
                   s.points[1].report.variants[0].timing.median);
  EXPECT_EQ(to_json(back).dump(), j.dump()) << "written again, the same document";

  auto bad = j;
  bad["points"][1]["at"].erase("size");
  EXPECT_EQ(refusal(bad), "'s.json': points[1].at.size: missing");
  bad = j;
  bad["points"][0]["at"]["extra"] = 3;
  EXPECT_NE(refusal(bad).find("points[0].at: expected a value for each axis"), std::string::npos);
  bad = j;
  bad["points"][0]["report"]["variants"][0]["timing"]["median"] = "slow";
  EXPECT_EQ(refusal(bad),
            "'s.json': points[0].report.variants[0].timing.median: expected a number");
  bad = j;
  bad["lab"] = "matmul";
  EXPECT_NE(refusal(bad).find("'transpose' in a sweep of lab 'matmul'"), std::string::npos);
  bad = j;
  bad["axes"] = nlohmann::json::array();
  EXPECT_EQ(refusal(bad), "'s.json': axes: a sweep needs an axis");
  bad = j;
  bad["axes"][0]["values"] = {1.5};
  EXPECT_EQ(refusal(bad), "'s.json': axes[0].values[0]: expected an integer");
  EXPECT_NE(refusal(nlohmann::json::array()).find("expected a JSON object"), std::string::npos);
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SweepHtml, PlotsOfTimeAndBandwidthAgainstTheAxisWithAPointPerVariantAndValue) {
  const Sweep s = transpose_sweep();
  const std::string html = render_sweep_html({s}, "gpulab test", {"gpulab", "report"});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>gpulab sweep of transpose</title>"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"median time against size\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"effective bandwidth against size\""), std::string::npos);
  EXPECT_NE(html.find("copy roof"), std::string::npos);
  const std::size_t variants = s.points[0].report.variants.size();
  EXPECT_EQ(count(html, "data-kind=\"sweep-point\""), 2 * 2 * variants)
      << "two charts, two points, each variant";
  std::size_t changes = 0;
  for (const auto& c : finding_courses(s)) changes += c.runs.size() - 1;
  EXPECT_EQ(count(html, "data-kind=\"finding-change\""), 2 * changes);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("Median time at each point"), std::string::npos);
}

TEST(SweepHtml, AFindingThatChangesIsMarkedAndTooManyLinesAreSaidToBeLeftOut) {
  Sweep s = transpose_sweep();
  // The 8192 point's first variant made to find something else: a change along size.
  auto& k = s.points[1].report.variants[0].kernels[0];
  ASSERT_TRUE(k.diagnosis.has_value());
  ASSERT_FALSE(k.diagnosis->findings.empty());
  k.diagnosis->findings[0].id = "a-finding-of-the-test";
  const std::string html = render_sweep_html({s}, "", {});
  EXPECT_NE(html.find("a-finding-of-the-test"), std::string::npos);
  EXPECT_GE(count(html, "data-kind=\"finding-change\""), 2u) << "marked on both charts";

  Sweep grid;
  grid.lab = s.lab;
  grid.axes = {{"size", {4096, 8192}}, {"tile", {}}};
  for (std::int64_t t = 1; t <= static_cast<std::int64_t>(kMaxLinesPerAxis) + 2; ++t) {
    grid.axes[1].values.push_back(t);
    for (const auto& p : s.points)
      grid.points.push_back({{{"size", p.at.at("size")}, {"tile", t}}, p.report});
  }
  const std::string many = render_sweep_html({grid}, "", {});
  EXPECT_NE(many.find("2 more plots of median time against size left out"), std::string::npos);
}

TEST(SweepFile, ASweepGpulabCouldNotReadBackIsNotWritten) {
  const Sweep s = transpose_sweep(false);
  EXPECT_TRUE(app::sweep_file("s.json", s).refused.empty()) << "within the limits";
  EXPECT_TRUE(app::sweep_file("", s).content.empty()) << "no file asked for";
  const auto file = app::sweep_file("s.json", s, JsonLimits{64, 100, 50, 1 << 20});
  EXPECT_TRUE(file.content.empty());
  EXPECT_NE(file.refused.find("not writing 's.json', which gpulab could not read back"),
            std::string::npos)
      << file.refused;
  EXPECT_NE(file.refused.find("sweep fewer points or variants"), std::string::npos);
}

TEST(SweepReportCommand, PrintsASweepsTablesOrWritesItsPlotsAndRefusesWhatDoesNotApply) {
  test::TempFolder dir;
  { std::ofstream(dir / "s.json") << sweep_file_text(transpose_sweep()); }
  const auto text = test::run_gpulab({"report", "s.json"}, dir.path);
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("sweep transpose: size 4096 to 8192"), std::string::npos) << text.out;

  const auto page = test::run_gpulab({"report", "s.json", "-o", "s.html"}, dir.path);
  EXPECT_EQ(page.code, 0) << page.err;
  std::ifstream in(dir / "s.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("data-kind=\"sweep-point\""), std::string::npos);

  const std::string lab_report = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
  const auto both = test::run_gpulab({"report", "s.json", lab_report, "-o", "b.html"}, dir.path);
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("report takes lab reports or sweeps, not both"), std::string::npos)
      << both.err;
  const auto trace = test::run_gpulab({"report", "s.json", "--trace", "t.json"}, dir.path);
  EXPECT_EQ(trace.code, 2);
  EXPECT_NE(trace.err.find("a sweep has none"), std::string::npos) << trace.err;
  const auto diagnose = test::run_gpulab({"diagnose", "--report", "s.json"}, dir.path);
  EXPECT_EQ(diagnose.code, 2);
  EXPECT_NE(diagnose.err.find("'gpulab.sweep/1' is not supported"), std::string::npos)
      << diagnose.err;
  std::vector<std::string> names = dir.names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"s.html", "s.json"})) << "nothing else written";
}

// Every timing figure of a variant scaled, its samples too: a slower run of it.
void slow_down(Variant& v, double factor) {
  auto& t = v.timing;
  for (auto& x : t.samples) x *= factor;
  t.median *= factor, t.min *= factor, t.max *= factor, t.mean *= factor, t.stddev *= factor;
}

TEST(SweepCompare, PointByPointWithTheNoiseAwareVerdictsAndTheRegressionGate) {
  test::TempFolder dir;
  Sweep a = transpose_sweep(false), b = a;
  slow_down(b.points[1].report.variants[1], 1.5);
  Sweep c = a;
  c.axes[0].values.push_back(16384);
  c.points.push_back({{{"size", 16384}}, a.points[1].report});
  std::ofstream(dir / "a.json") << sweep_file_text(a);
  std::ofstream(dir / "b.json") << sweep_file_text(b);
  std::ofstream(dir / "c.json") << sweep_file_text(c);

  const auto same = test::run_gpulab({"compare", "a.json", "a.json"}, dir.path);
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("a.json at size=4096"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("a.json at size=8192"), std::string::npos) << same.out;
  EXPECT_EQ(same.out.find("slower"), std::string::npos) << same.out;

  const std::string slowed = b.points[1].report.variants[1].name;
  const auto gate =
      test::run_gpulab({"compare", "a.json", "b.json", "--fail-on-regression", "5"}, dir.path);
  EXPECT_EQ(gate.code, 5) << gate.err;
  EXPECT_NE(
      gate.err.find("regression: transpose " + slowed + " is 50.0% slower in b.json at size=8192"),
      std::string::npos)
      << gate.err;

  const auto csv = test::run_gpulab({"compare", "a.json", "b.json", "--format", "csv"}, dir.path);
  EXPECT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("a.json at size=8192,b.json at size=8192,transpose," + slowed),
            std::string::npos)
      << csv.out;

  const auto extra = test::run_gpulab({"compare", "a.json", "c.json"}, dir.path);
  EXPECT_EQ(extra.code, 0) << extra.err;
  EXPECT_NE(extra.err.find("warning: c.json at size=16384: no such point in a.json"),
            std::string::npos)
      << extra.err;

  const std::string lab_report = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"compare", "a.json", lab_report}, {"compare", "a.json", "b.json", "c.json"}}) {
    const auto refused = test::run_gpulab(args, dir.path);
    EXPECT_EQ(refused.code, 2);
    EXPECT_NE(refused.err.find("compare takes two sweeps, point by point, or reports"),
              std::string::npos)
        << refused.err;
  }
}

// A sweep as `gpulab sweep vectorize --axis size=1Mi:1Gi:*4 --variant all --json` wrote it on an
// H100 (tests/fixtures/sweeps/vectorize-h100.json): it reads back, and its table, CSV, comparison
// and plots show the L2 cliff: float4 above the copy roof while input and output fit the 50 MB
// L2 (4 Mi elements, 32 MB), under it from 16 Mi on.
TEST(SweepRecorded, TheVectorizeSweepReadsBackAndShowsTheL2Cliff) {
  const std::string path = std::string(GPULAB_FIXTURES_DIR) + "/sweeps/vectorize-h100.json";
  const Sweep s = sweep_from_document(nlohmann::json::parse(read_file(path)), path);
  ASSERT_EQ(s.lab, "vectorize");
  ASSERT_EQ(s.points.size(), 6u);
  const auto float4_at = [&](std::size_t point) {
    const auto& r = s.points[point].report;
    const auto v = std::find_if(r.variants.begin(), r.variants.end(),
                                [](const Variant& x) { return x.name == "float4"; });
    EXPECT_NE(v, r.variants.end());
    return v->effective_bandwidth / r.device.roofs.copy_bandwidth;
  };
  EXPECT_EQ(s.points[1].at.at("size"), 4 << 20);
  EXPECT_GT(float4_at(1), 1.0) << "4 Mi elements: served by L2, above the DRAM copy roof";
  for (std::size_t point = 2; point < 6; ++point)
    EXPECT_LT(float4_at(point), 1.02) << "from 16 Mi elements every byte comes from DRAM";

  const std::string text = render_sweep_text(s, Style{}, 100);
  EXPECT_NE(text.find("sweep vectorize: size 1Mi to 1Gi (6 values); 6 points"), std::string::npos)
      << text;
  const std::string csv = sweep_csv(s);
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')) - 1, 6u * 3u)
      << "a row per point and variant";
  EXPECT_NE(csv.find("\n1073741824,float4,"), std::string::npos) << csv.substr(0, 400);

  test::TempFolder dir;
  const auto same = test::run_gpulab({"compare", path, path}, dir.path);
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("at size=1Gi"), std::string::npos) << same.out.substr(0, 600);
  const std::string html = render_sweep_html({s}, "gpulab test", {"gpulab", "report"});
  EXPECT_EQ(count(html, "data-kind=\"sweep-point\""), 2u * 6u * 3u)
      << "time and bandwidth: a point per variant and value";
}

}  // namespace
}  // namespace gpulab::report
