// Reports at the scale of jobs: a program's functions as columns over their launches
// (reports/kernel_json.hpp, docs/report-schema.md "launches"), and a report of 10,000 profiled
// launches that gpulab wrote, read back by every command that reads reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "app/outputs.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/kernel_json.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab::report {
namespace {

using nlohmann::json;

Diagnosis diagnosis(const std::string& finding, double value) {
  Diagnosis d;
  d.verdict = "memory-bound";
  PathStep step;
  step.node = "coalescing";
  step.answer = finding.empty() ? "no" : "yes";
  step.finding = finding;
  step.evidence.push_back({"sectors_per_request", value, ">", "coalescing.sectors", 8});
  d.path.push_back(step);
  if (!finding.empty()) {
    Finding f;
    f.id = finding;
    f.title = "Uncoalesced global access";
    f.score = 0.5 + value / 100;
    f.evidence = step.evidence;
    d.findings.push_back(f);
  }
  return d;
}

std::vector<Kernel> launches() {
  std::vector<Kernel> out;
  for (int i = 0; i < 5; ++i) {
    Kernel k;
    k.name = "gather";
    k.function = "void gather(float const*, float*)";
    k.mangled_name = "_Z6gatherPKfPf";
    k.launch_index = i;
    k.attributes.registers_per_thread = 32;
    k.attributes.grid_blocks = 1000 + i;
    k.metrics = {{"dram__bytes.sum", 1e6 * (i + 1)}, {"smsp__inst_executed.sum", 4096}};
    if (i == 3) k.metrics.erase("smsp__inst_executed.sum");  // not measured in that launch
    k.derived = {{"sectors_per_request", 16.0 + i}};
    if (i != 1) k.diagnosis = diagnosis(i == 4 ? "" : "uncoalesced", 16.0 + i);
    out.push_back(std::move(k));
  }
  return out;
}

// Shared fields are written once, differing ones as one value per launch, and the launches
// whose diagnoses reached the same answers share one stored diagnosis; read back, every field
// is the launch's own and every diagnosis has its outcome.
TEST(LaunchColumns, SharedFieldsOnceAndOneDiagnosisPerOutcome) {
  const auto kernels = launches();
  const json columns = launch_columns_json(kernels);
  EXPECT_EQ(columns.at("count"), 5);
  EXPECT_EQ(columns.at("name"), "gather");
  EXPECT_EQ(columns.at("attributes").at("registers_per_thread"), 32);
  EXPECT_EQ(columns.at("attributes").at("grid_blocks"), json({1000, 1001, 1002, 1003, 1004}));
  EXPECT_EQ(columns.at("metrics").at("smsp__inst_executed.sum"),
            json({4096.0, 4096.0, 4096.0, nullptr, 4096.0}));
  EXPECT_EQ(columns.at("diagnoses").size(), 2u) << "uncoalesced (launches 0, 2, 3) and none (4)";
  EXPECT_EQ(columns.at("diagnosis_of"), json({0, nullptr, 0, 0, 1}));
  EXPECT_FALSE(columns.contains("sources"));

  const auto back = read_launch_columns(Reader(columns, "launches"));
  ASSERT_EQ(back.size(), kernels.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back[i].name, kernels[i].name);
    EXPECT_EQ(back[i].function, kernels[i].function);
    EXPECT_EQ(back[i].launch_index, kernels[i].launch_index);
    EXPECT_EQ(back[i].attributes.grid_blocks, kernels[i].attributes.grid_blocks);
    EXPECT_EQ(back[i].metrics, kernels[i].metrics);
    EXPECT_EQ(back[i].derived, kernels[i].derived);
    ASSERT_EQ(back[i].diagnosis.has_value(), kernels[i].diagnosis.has_value());
    if (back[i].diagnosis) EXPECT_TRUE(same_outcome(*back[i].diagnosis, *kernels[i].diagnosis));
  }
  // Launch 2 shares launch 0's stored diagnosis: its evidence is launch 0's (its own counters
  // stay in the columns).
  EXPECT_EQ(back[2].diagnosis->path[0].evidence[0].value, 16.0);
  EXPECT_EQ(back[2].derived.at("sectors_per_request"), 18.0);
}

// Of the launches that share an outcome, the longest is the one whose diagnosis is stored: the
// launch the text and HTML reports show for the function keeps its own evidence.
TEST(LaunchColumns, TheLongestLaunchOfAnOutcomeIsTheOneStored) {
  auto kernels = launches();
  for (auto& k : kernels) k.metrics["gpu__time_duration.sum"] = 1000;
  kernels[2].metrics["gpu__time_duration.sum"] = 5000;
  const auto back = read_launch_columns(Reader(launch_columns_json(kernels), "launches"));
  for (std::size_t i : {0, 2, 3})
    EXPECT_EQ(back[i].diagnosis->path[0].evidence[0].value, 18.0) << i;
  EXPECT_EQ(launch_bytes(Report{}), 0u);
}

TEST(LaunchColumns, AColumnOfTheWrongLengthOrAStrayIndexNamesItsPlace) {
  const json good = launch_columns_json(launches());
  const auto refused = [](json columns, const std::string& says) {
    try {
      read_launch_columns(Reader(columns, "variants[0].launches"));
      ADD_FAILURE() << "read without error: " << says;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  json short_column = good;
  short_column["attributes"]["grid_blocks"].erase(4);
  refused(short_column, "variants[0].launches.attributes.grid_blocks: expected one value for each");
  json stray = good;
  stray["diagnosis_of"][0] = 7;
  refused(stray, "variants[0].launches.diagnosis_of[0]: names no stored diagnosis");
  json counted = good;
  counted["count"] = 1000000000;
  refused(counted, "variants[0].launches.diagnosis_of: expected one entry for each");
  json negative = good;
  negative["metrics"]["dram__bytes.sum"][2] = "many";
  refused(negative, "variants[0].launches[2].metrics.dram__bytes.sum: expected a number");
}

// A few bytes of columns may stand for a stored diagnosis copied into each launch: what reading
// makes of them is bounded before it is made, so a small hostile input cannot take the memory.
TEST(LaunchColumns, ADiagnosisSharedPastTheMemoryBoundIsRefusedBeforeItIsCopied) {
  auto kernels = launches();
  kernels[0].diagnosis->findings[0].detail = std::string(1 << 20, 'x');  // 1 MiB
  json columns = launch_columns_json({kernels[0]});
  const std::size_t count = (kMaxLaunchBytes >> 20) + 10;  // each launch copies 1 MiB
  columns["count"] = count;
  columns["diagnosis_of"] = json::array();
  for (std::size_t i = 0; i < count; ++i) columns["diagnosis_of"].push_back(0);
  columns["launch_index"] = 0;
  for (auto& [name, column] : columns["metrics"].items()) column = 1.0;
  try {
    read_launch_columns(Reader(columns, "variants[0].launches"));
    ADD_FAILURE() << "read without error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("variants[0].launches: its launches would take more than "
                                         "2 GiB once read"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(launch_bytes(kernels[1]), 20'000u) << "a launch and its diagnosis";
}

// A profile of 10,000 launches, every one profiled (`basic`) and diagnosed, as the stand-in
// program records them from the counters of a report measured on a GPU: the report gpulab
// writes is compact, loads back to the same report, and diagnose, compare and report read it.
TEST(JobScale, ATenThousandLaunchReportIsReadBackByEveryCommand) {
  test::TempFolder folder;
  const std::string gpulab = "env TMPDIR=" + folder.path + " " + GPULAB_BINARY;
  const std::string report = folder / "job.json";
  const auto profile =
      test::sh(gpulab + " profile --metrics basic --launch-count 10000 --diagnose" + " --json " +
               report + " -- " + GPULAB_STAND_IN + " --launches 10000 --counters-from " +
               GPULAB_FIXTURES_DIR + "/outside/torch_ops.json 2>&1");
  ASSERT_EQ(profile.code, 0) << profile.text;

  const std::string text = read_file(report);
  // About 440 bytes a launch (29 counters and derived values each): one object per launch, with
  // its diagnosis, took 13 KB.
  EXPECT_LT(text.size(), 10'000'000u) << "bytes for 10,000 profiled launches";
  const Report r = load_report(report);
  EXPECT_EQ(r.program->profiled_launches, 10000);
  std::size_t kernels = 0, diagnosed = 0;
  for (const auto& v : r.variants) {
    kernels += v.kernels.size();
    for (const auto& k : v.kernels) diagnosed += k.diagnosis.has_value();
  }
  EXPECT_EQ(kernels, 10000u);
  EXPECT_GT(diagnosed, 0u);
  EXPECT_EQ(report_file_text(r), text) << "written again, the same report";
  // The scripts that read programs' reports see the same launches (scripts/report_kernels.py).
  const auto script = test::sh(
      "python3 -c 'import json, sys; sys.path.insert(0, \"" + std::string(GPULAB_SOURCE_DIR) +
      "/scripts\"); from report_kernels import kernels_of; r = json.load(open(\"" + report +
      "\")); ks = [k for v in r[\"variants\"] for k in kernels_of(v)]; print(len(ks), "
      "sum(len(k[\"metrics\"]) for k in ks), sum(\"diagnosis\" in k for k in ks), "
      "ks[-1][\"launch_index\"])' 2>&1");
  std::size_t metrics = 0;
  for (const auto& v : r.variants)
    for (const auto& k : v.kernels) metrics += k.metrics.size();
  EXPECT_EQ(script.text, fmt::format("{} {} {} {}\n", kernels, metrics, diagnosed,
                                     r.variants.back().kernels.back().launch_index));

  const std::string html = folder / "job.html";
  for (const std::string& command :
       {"diagnose --report " + report, "compare " + report + " " + report,
        "report " + report + " -o " + html}) {
    const auto read = test::sh(gpulab + " " + command + " 2>&1");
    EXPECT_EQ(read.code, 0) << command << "\n" << read.text.substr(0, 2000);
  }
  // The page shows each function's longest diagnosed launch, its outliers and its longest
  // launches, not 10,000 blocks (60 MB when it did).
  EXPECT_LT(read_file(html).size(), 1'000'000u) << "bytes of HTML";
}

// A report past what gpulab reads back is not written: a warning line says why and what to do,
// the command ends with the usage code, and no file is left (limits made small for the test).
TEST(JobScale, AReportPastWhatGpulabReadsBackIsNotWritten) {
  test::TempFolder folder;
  const Report r = load_report(std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json");
  const std::string path = folder / "r.json";
  EXPECT_TRUE(app::report_file(path, r).refused.empty()) << "within the limits";
  const auto file = app::report_file(path, r, JsonLimits{64, 100, 50, 1 << 20});
  EXPECT_TRUE(file.content.empty());
  std::ostringstream out, err;
  app::Io io{out, err};
  EXPECT_EQ(app::save_outputs({file}, io), 2);
  EXPECT_NE(err.str().find("gpulab: warning: not writing '" + path +
                           "', which gpulab could not read back (the report: more than 50 object"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("profile fewer launches (--launch-count)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace gpulab::report
