// gpulab compare on the H200 fixtures and on reports derived from them inside the test (times
// or counters scaled by known factors): verdicts, noise handling, exit codes, output shape.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "reports/base/input_file.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/compare.hpp"
#include "reports/render/render_compare.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/statistics.hpp"
#include "unit/run_cli.hpp"

namespace gpulab {
namespace {

const std::string kA = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";
const std::string kB = std::string(GPULAB_FIXTURES_DIR) + "/transpose_4096_h200.json";

nlohmann::json fixture() { return nlohmann::json::parse(read_file(kA)); }

// Writes `doc` to a temporary file and returns its path.
std::string write_temp(const nlohmann::json& doc, const std::string& name) {
  const std::string path =
      ::testing::TempDir() + "/gpulab_cmp_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << doc.dump();
  return path;
}

// The fixture with every variant's timing multiplied by `factor`.
nlohmann::json with_times_scaled(double factor) {
  auto doc = fixture();
  for (auto& v : doc["variants"]) {
    auto& t = v["timing"];
    for (const char* key : {"median", "min", "max", "mean", "stddev"})
      t[key] = t[key].get<double>() * factor;
    for (auto& s : t["samples"]) s = s.get<double>() * factor;
  }
  return doc;
}

using test::run_cli;

TEST(Compare, ReportWithItselfIsAllSame) {
  const auto r = report::load_report(kA);
  const auto c = report::compare_reports(r, r, "a", "a");
  EXPECT_TRUE(c.warnings.empty());
  ASSERT_EQ(c.variants.size(), 4u);
  for (const auto& v : c.variants) {
    EXPECT_EQ(v.verdict, report::Verdict::same) << v.variant_a;
    EXPECT_DOUBLE_EQ(v.change, 0.0);
    for (const auto& k : v.kernels)
      for (const auto& m : k.metrics) EXPECT_EQ(m.verdict, report::Verdict::same) << m.name;
  }
  const auto cli = run_cli({"compare", kA, kA, "--fail-on-regression", "1"});
  EXPECT_EQ(cli.code, 0) << cli.err;
}

TEST(Compare, SlowerOutsideNoiseIsARegression) {
  const auto slow = write_temp(with_times_scaled(1.5), "slow.json");
  const auto a = report::load_report(kA), b = report::load_report(slow);
  const auto c = report::compare_reports(a, b, "a", "b");
  for (const auto& v : c.variants) {
    EXPECT_EQ(v.verdict, report::Verdict::slower) << v.variant_a;
    EXPECT_NEAR(v.change, 0.5, 1e-9);
    EXPECT_NEAR(v.speedup, 1 / 1.5, 1e-9);
  }
  auto r = run_cli({"compare", kA, slow, "--fail-on-regression", "10"});
  EXPECT_EQ(r.code, 5);
  EXPECT_NE(r.err.find("regression: transpose naive is 50.0% slower"), std::string::npos) << r.err;
  r = run_cli({"compare", kA, slow, "--fail-on-regression", "60"});
  EXPECT_EQ(r.code, 0) << "50% slower is within a 60% limit";
  r = run_cli({"compare", kA, slow});
  EXPECT_EQ(r.code, 0) << "no gating without --fail-on-regression";
  std::remove(slow.c_str());
}

TEST(Compare, DifferenceInsideNoiseIsSame) {
  const auto a = report::load_report(kA);
  const auto b = report::from_json(with_times_scaled(1.01));
  for (const auto& v : report::compare_reports(a, b, "a", "b").variants) {
    EXPECT_EQ(v.verdict, report::Verdict::same) << v.variant_a << " change " << v.change;
    EXPECT_GE(v.noise, report::kNoiseFloor);
  }
  const auto fast = report::from_json(with_times_scaled(0.5));
  for (const auto& v : report::compare_reports(a, fast, "a", "b").variants)
    EXPECT_EQ(v.verdict, report::Verdict::faster);
}

TEST(Compare, CountersAreComparedWithTightTolerance) {
  auto doc = fixture();
  auto& metrics = doc["variants"][0]["kernels"][0]["metrics"];
  const std::string sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
  metrics[sectors] = metrics[sectors].get<double>() * 1.005;  // inside 2%
  auto b = report::from_json(doc);
  report::derive_all(b);
  auto find = [](const report::Comparison& c, const std::string& name) {
    for (const auto& m : c.variants[0].kernels[0].metrics)
      if (m.name == name) return m;
    return report::MetricDelta{};
  };
  const auto a = report::load_report(kA);
  auto c = report::compare_reports(a, b, "a", "b", {{sectors}});
  EXPECT_EQ(find(c, sectors).verdict, report::Verdict::same);
  metrics[sectors] = metrics[sectors].get<double>() * 1.5;
  b = report::from_json(doc);
  c = report::compare_reports(a, b, "a", "b", {{sectors, "gst_sectors_per_request"}});
  EXPECT_EQ(find(c, sectors).verdict, report::Verdict::changed);
  EXPECT_NEAR(find(c, sectors).change, 1.005 * 1.5 - 1, 1e-9);
}

TEST(Compare, TwoVariantsOfOneReport) {
  const auto r = run_cli({"compare", kA, "--variants", "naive,padded"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("naive → padded"), std::string::npos);
  EXPECT_NE(r.out.find("faster"), std::string::npos);
  EXPECT_NE(r.out.find("transpose_naive → transpose_padded"), std::string::npos) << r.out;
}

TEST(Compare, FindingsResolvedAndIntroduced) {
  const auto r = run_cli({"compare", kA, "--variants", "naive,tiled"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("resolved uncoalesced-global; introduced shared-bank-conflicts"),
            std::string::npos)
      << r.out;
  const auto json = run_cli({"compare", kA, "--variants", "tiled,padded", "--format", "json"});
  const auto doc = nlohmann::json::parse(json.out);
  const auto& findings = doc["comparisons"][0]["variants"][0]["findings"];
  EXPECT_EQ(findings["resolved"], nlohmann::json::array({"shared-bank-conflicts"}));
  EXPECT_EQ(findings["introduced"], nlohmann::json::array({"memory-bound-below-roof"}));
  const auto& principal = doc["comparisons"][0]["variants"][0]["principal"];
  EXPECT_EQ(principal["a"], "shared-bank-conflicts");
  EXPECT_EQ(principal["b"], "memory-bound-below-roof");
}

// What A's findings were estimated to be worth, beside the speedup B measured where B resolved
// them: the check docs/estimates.md tabulates, for any two reports.
TEST(Compare, EstimatesStandBesideTheMeasuredChange) {
  const auto r = run_cli({"compare", kA, "--variants", "naive,padded"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("estimate for naive → padded: uncoalesced-global est. 7.81x faster if "
                       "fixed; B resolved it; measured speedup 6.49x"),
            std::string::npos)
      << r.out;
  const auto same = run_cli({"compare", kA, kA});
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("estimate for naive: uncoalesced-global est. 7.81x faster if fixed; B "
                          "still has it"),
            std::string::npos)
      << same.out;

  const auto json = run_cli({"compare", kA, "--variants", "naive,padded", "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  const auto& estimates = doc["comparisons"][0]["variants"][0]["estimates"];
  ASSERT_EQ(estimates.size(), 1u) << estimates;
  EXPECT_EQ(estimates[0]["finding"], "uncoalesced-global");
  EXPECT_EQ(estimates[0]["model"], "roof");
  EXPECT_TRUE(estimates[0]["resolved"].get<bool>());
  EXPECT_NEAR(estimates[0]["speedup"].get<double>(), 1 / (1 - estimates[0]["saved"].get<double>()),
              1e-9);
}

TEST(Compare, PrincipalFindingsComeBeforeTheCounters) {
  const auto r = run_cli({"compare", kA, "--variants", "naive,tiled"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto principal =
      r.out.find("principal finding of naive → tiled: uncoalesced-global → shared-bank-conflicts");
  ASSERT_NE(principal, std::string::npos) << r.out;
  EXPECT_LT(principal, r.out.find("dram")) << "before the counter tables";
}

// The streams fixture recorded on the H200: the serial pinned variant against the overlapped one.
TEST(Compare, TimelinesOfTracedVariantsAreCompared) {
  const auto r = report::load_report(std::string(GPULAB_FIXTURES_DIR) + "/labs/streams.json");
  const auto c = report::compare_variants(r, "serial-pinned", "overlapped", "streams.json");
  const auto& deltas = c.variants.at(0).timeline;
  const auto find = [&](const std::string& name) -> const report::MetricDelta& {
    for (const auto& d : deltas)
      if (d.name == name) return d;
    ADD_FAILURE() << name << " not compared";
    return deltas.front();
  };
  EXPECT_EQ(find("overlap_fraction").verdict, report::Verdict::changed);
  EXPECT_LT(*find("overlap_fraction").a, 0.05);
  EXPECT_GT(*find("overlap_fraction").b, 0.5);
  EXPECT_EQ(find("kernel_seconds").verdict, report::Verdict::same);  // the same eight kernels
  EXPECT_EQ(find("migrated_htod_bytes").verdict, report::Verdict::same);

  const auto itself = report::compare_reports(r, r, "a", "b");
  for (const auto& v : itself.variants)
    for (const auto& d : v.timeline) EXPECT_EQ(d.verdict, report::Verdict::same) << d.name;
}

TEST(Compare, DifferentParametersOrDevicesWarnOnce) {
  auto r = run_cli({"compare", kA, kB});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("warning: different parameters"), std::string::npos) << r.out;
  auto doc = fixture();
  doc["device"]["name"] = "Another GPU";
  const auto other = write_temp(doc, "other_device.json");
  r = run_cli({"compare", kA, other});
  EXPECT_NE(r.out.find("warning: different devices (NVIDIA H200 vs Another GPU)"),
            std::string::npos);
  std::remove(other.c_str());
}

TEST(Compare, VariantOnOneSideOnlyIsAddedOrRemoved) {
  auto doc = fixture();
  doc["variants"].erase(1);  // drop "tiled"
  const auto b = report::from_json(doc);
  const auto c = report::compare_reports(report::load_report(kA), b, "a", "b");
  ASSERT_EQ(c.variants.size(), 4u);
  EXPECT_EQ(c.variants[1].variant_a, "tiled");
  EXPECT_EQ(c.variants[1].verdict, report::Verdict::removed);
}

// CSV keeps what the other forms say: the warnings on every row of their comparison, and no
// change or noise where a variant is on one side only.
TEST(Compare, CsvKeepsTheWarningsAndLeavesOneSidedRowsEmpty) {
  const auto r = run_cli({"compare", kA, kB, "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("a,b,lab,variant_a,variant_b,median_a_s,median_b_s,change,noise,verdict,"
                        "warnings\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find(",different parameters (cols=8192 rows=8192 vs cols=4096 rows=4096)"),
            std::string::npos)
      << r.out;

  auto doc = fixture();
  doc["variants"].erase(1);  // drop "tiled"
  const auto b = write_temp(doc, "one_sided.json");
  const auto one_sided = run_cli({"compare", kA, b, "--format", "csv"});
  ASSERT_EQ(one_sided.code, 0) << one_sided.err;
  EXPECT_NE(one_sided.out.find(",tiled,,"), std::string::npos) << one_sided.out;
  EXPECT_NE(one_sided.out.find(",,,removed,"), std::string::npos)
      << "no median of B, no change, no noise:\n"
      << one_sided.out;
  std::remove(b.c_str());
}

TEST(Compare, ThreeReportsGiveATableAgainstTheFirst) {
  const auto slow = write_temp(with_times_scaled(2.0), "slow3.json");
  const auto r = run_cli({"compare", kA, kA, slow});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("baseline: " + kA), std::string::npos);
  EXPECT_NE(r.out.find("same"), std::string::npos);
  EXPECT_NE(r.out.find("slower (0.500x)"), std::string::npos) << r.out;
  std::remove(slow.c_str());
}

TEST(Compare, MarkdownAndJsonShapes) {
  auto r = run_cli({"compare", kA, kB, "--format", "markdown"});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("| variant | A median |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("|---|---:|"), std::string::npos);
  EXPECT_NE(r.out.find("### naive: transpose\\_naive"), std::string::npos) << "Markdown-escaped";
  r = run_cli({"compare", kA, kB, "--format", "json"});
  ASSERT_EQ(r.code, 0);
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["schema"], "gpulab.compare/1");
  EXPECT_EQ(json["comparisons"][0]["variants"].size(), 4u);
  EXPECT_EQ(json["comparisons"][0]["variants"][0]["verdict"], "faster");
}

TEST(Compare, BadInputIsExit2NamingTheFile) {
  const std::string full = read_file(kA);
  const std::string truncated = ::testing::TempDir() + "/gpulab_cmp_trunc.json";
  std::ofstream(truncated) << full.substr(0, full.size() / 3);
  auto r = run_cli({"compare", kA, truncated});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(truncated), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  auto doc = fixture();
  doc["schema"] = "gpulab.report/99";
  const auto future = write_temp(doc, "future.json");
  r = run_cli({"compare", kA, future});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gpulab.report/99"), std::string::npos) << r.err;

  EXPECT_EQ(run_cli({"compare", kA, "/nonexistent/x.json"}).code, 2);
  EXPECT_EQ(run_cli({"compare", kA}).code, 2) << "one report without --variants";
  EXPECT_EQ(run_cli({"compare", kA, kB, "--variants", "naive,padded"}).code, 2);
  EXPECT_EQ(run_cli({"compare", kA, "--variants", "naive"}).code, 2);
  EXPECT_EQ(run_cli({"compare", kA, "--variants", "naive,bogus"}).code, 2);
  EXPECT_EQ(run_cli({"compare", kA, kB, "--metrics", "bogus"}).code, 2);
  EXPECT_EQ(run_cli({"compare", kA, kB, "--fail-on-regression", "-3"}).code, 2);
  std::remove(truncated.c_str());
  std::remove(future.c_str());
}

// Two reports of one kernel with per-instruction data: its hot lines side by side, matched by file
// and line, or by their instructions where the source around them moved (here: every line two
// further down, the store's samples cut to a tenth).
TEST(Compare, HotLinesAreMatchedByLineOrByTheirInstructions) {
  const std::string a = std::string(GPULAB_FIXTURES_DIR) + "/source/transpose_naive.hand-made.json";
  auto doc = nlohmann::json::parse(read_file(a));
  auto& source = doc["variants"][0]["kernels"][0]["source"];
  int store_line = 0;
  for (auto& i : source["instructions"]) {
    if (i["sass"].get<std::string>().rfind("STG", 0) == 0) {
      i["counters"]["samples"] = 90;
      i["counters"]["samples.long_scoreboard"] = 61;
      i["counters"]["samples.lg_throttle"] = 28;
      store_line = source["lines"][i["line"].get<int>()]["line"];
    }
  }
  for (auto& l : source["lines"]) l["line"] = l["line"].get<int>() + 2;
  const auto b = write_temp(doc, "moved.json");
  const auto c = report::compare_reports(report::load_report(a), report::load_report(b), "a", "b");
  const auto& lines = c.variants.at(0).kernels.at(0).lines;
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].line, store_line) << "A's hottest first";
  EXPECT_EQ(lines[0].line_b, store_line + 2);
  EXPECT_EQ(lines[0].matched_by, "instruction");
  EXPECT_NEAR(*lines[0].a, 0.951, 0.001);
  EXPECT_LT(*lines[0].b, *lines[0].a) << "a smaller share of fewer samples";
  const auto text = run_cli({"compare", a, b});
  EXPECT_NE(text.out.find("naive: transpose_naive, hot lines"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("labs/transpose.cu:" + std::to_string(store_line) +
                          " → :" + std::to_string(store_line + 2)),
            std::string::npos)
      << text.out;
  const auto json = nlohmann::json::parse(run_cli({"compare", a, b, "--format", "json"}).out);
  EXPECT_EQ(json["comparisons"][0]["variants"][0]["kernels"][0]["lines"][0]["matched_by"],
            "instruction");
  // A report compared with itself matches every line by its number.
  const auto itself =
      report::compare_reports(report::load_report(a), report::load_report(a), "a", "a");
  for (const auto& l : itself.variants.at(0).kernels.at(0).lines) EXPECT_EQ(l.matched_by, "line");
  std::remove(b.c_str());
}

// A profiled program's launches meet by function and NVTX range path, then by order within the
// path: step 2 of one run against step 2 of the other, whichever order they were profiled in.
TEST(Compare, ProgramLaunchesMeetByTheirNvtxRangePath) {
  const auto run = [](const std::vector<std::pair<std::string, double>>& launches) {
    report::Report r;
    r.program.emplace();
    r.program->argv = {"train.py"};
    report::Variant& v = r.variants.emplace_back();
    v.name = "gemm";
    v.role = report::Role::function;
    v.timing = report::summarize({1e-3}, 0, false);
    for (const auto& [path, cycles] : launches) {
      report::Kernel& k = v.kernels.emplace_back();
      k.name = "gemm";
      k.nvtx_path = path;
      k.launch_index = static_cast<int>(v.kernels.size()) - 1;
      k.metrics["sm__cycles_elapsed.max"] = cycles;
    }
    return r;
  };
  const auto a = run({{"train/step 1", 100}, {"train/step 2", 200}});
  const auto b = run({{"train/step 2", 210}, {"train/step 1", 100}, {"eval", 50}});
  report::CompareOptions options;
  options.metrics = {"sm__cycles_elapsed.max"};
  const auto c = report::compare_reports(a, b, "a", "b", options);
  ASSERT_EQ(c.variants.size(), 1u);
  const auto& kernels = c.variants[0].kernels;
  ASSERT_EQ(kernels.size(), 3u);
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> by_label;
  for (const auto& k : kernels)
    by_label[report::delta_label(k)] = {k.metrics.at(0).a, k.metrics.at(0).b};
  using Pair = std::pair<std::optional<double>, std::optional<double>>;
  EXPECT_EQ(by_label.at("gemm in train/step 1"), (Pair{100, 100}));
  EXPECT_EQ(by_label.at("gemm in train/step 2"), (Pair{200, 210}));
  EXPECT_EQ(by_label.at("gemm in eval"), (Pair{std::nullopt, 50})) << "only in B";
  const std::string text = report::render_comparison(c, report::Style{});
  EXPECT_NE(text.find("gemm in train/step 2"), std::string::npos) << text;
  const auto json = report::comparison_json({c});
  EXPECT_EQ(json["comparisons"][0]["variants"][0]["kernels"][0]["nvtx_path"], "train/step 1");
}

}  // namespace
}  // namespace gpulab
