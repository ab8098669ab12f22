// `gpulab export --sqlite` (docs/export.md): the committed fixtures counted in the database as
// they hold, the documented queries run on them, a report exported twice, a killed export, and
// the time of a job's 10,000 launches. The database is read with the sqlite3 command.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/base/input_file.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/sanitized.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

namespace gpulab {
namespace {

namespace fs = std::filesystem;
using test::sh;
using test::TempFolder;

const std::string kBinary = GPULAB_BINARY;
const std::string kFixtures = GPULAB_FIXTURES_DIR;

// The sqlite3 command's answer to `sql`, rows on lines, columns separated by '|'.
std::string query(const std::string& db, const std::string& sql) {
  const std::string file = db + ".sql";
  std::ofstream(file) << sql << "\n";
  const auto r = sh("sqlite3 -batch " + db + " < " + file + " 2>&1");
  fs::remove(file);
  EXPECT_EQ(r.code, 0) << sql << "\n" << r.text;
  return r.text;
}

// Why the export tests cannot run here, or "" when they can.
std::string missing() {
  if (sh("command -v sqlite3").text.empty()) return "needs the sqlite3 command";
  const auto r = sh(kBinary + " export --sqlite /nonexistent-folder/x.db " + kFixtures +
                    "/transpose_h200.json 2>&1");
  if (r.text.find("built without SQLite") != std::string::npos)
    return "gpulab built without SQLite";
  return "";
}

std::vector<std::string> fixture_reports() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kFixtures + "/labs"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  for (const char* name : {"torch_ops", "cub_algorithms", "thrust_algorithms", "cublas_routines"})
    out.push_back(kFixtures + "/outside/" + name + ".json");
  out.push_back(kFixtures + "/transpose_h200.json");
  out.push_back(kFixtures + "/transpose_4096_h200.json");
  return out;
}

std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += " " + f;
  return out;
}

TEST(Export, TheFixturesAreCountedAsTheyHold) {
  if (const auto why = missing(); !why.empty()) GTEST_SKIP() << why;
  TempFolder folder;
  const std::string db = folder / "runs.db";
  const auto files = fixture_reports();
  const auto r = sh(kBinary + " export --sqlite " + db + joined(files) + " 2>&1");
  ASSERT_EQ(r.code, 0) << r.text;
  std::int64_t variants = 0, launches = 0, metrics = 0, findings = 0, programs = 0, events = 0;
  for (const auto& f : files) {
    const auto report = report::load_report(f);
    programs += report.program.has_value();
    for (const auto& v : report.variants) {
      ++variants;
      if (v.timeline) events += static_cast<std::int64_t>(v.timeline->activities.size());
      for (const auto& k : v.kernels) {
        ++launches;
        metrics += static_cast<std::int64_t>(k.metrics.size() + k.derived.size());
        if (k.diagnosis) findings += static_cast<std::int64_t>(k.diagnosis->findings.size());
      }
    }
  }
  EXPECT_EQ(query(db,
                  "SELECT count(*) FROM reports; SELECT count(*) FROM programs; "
                  "SELECT count(*) FROM variants; SELECT count(*) FROM launches; "
                  "SELECT count(*) FROM metrics; SELECT count(*) FROM findings; "
                  "SELECT count(*) FROM timeline_events;"),
            fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n", files.size(), programs, variants, launches,
                        metrics, findings, events));
  EXPECT_GT(launches, 100);
  EXPECT_GT(metrics, 1000);
}

TEST(Export, AReportAlreadyThereIsRefusedOrReplaced) {
  if (const auto why = missing(); !why.empty()) GTEST_SKIP() << why;
  TempFolder folder;
  const std::string db = folder / "runs.db";
  const std::string t = kFixtures + "/transpose_h200.json";
  ASSERT_EQ(sh(kBinary + " export --sqlite " + db + " " + t + " 2>&1").code, 0);
  const auto again = sh(kBinary + " export --sqlite " + db + " " + t + " 2>&1");
  EXPECT_EQ(again.code, 2) << again.text;
  EXPECT_NE(again.text.find("is already in the database"), std::string::npos) << again.text;
  EXPECT_EQ(std::count(again.text.begin(), again.text.end(), '\n'), 1) << again.text;
  EXPECT_EQ(sh(kBinary + " export --replace --sqlite " + db + " " + t + " 2>&1").code, 0);
  EXPECT_EQ(query(db,
                  "SELECT count(*) FROM reports; SELECT count(DISTINCT report_id) FROM "
                  "variants;"),
            "1\n1\n");
  // A bad report among good ones: nothing is written.
  const auto bad = sh(kBinary + " export --sqlite " + db + " " + kFixtures +
                      "/transpose_4096_h200.json " + kFixtures + "/README.md 2>&1");
  EXPECT_EQ(bad.code, 2) << bad.text;
  EXPECT_EQ(query(db, "SELECT count(*) FROM reports;"), "1\n");
}

// The queries of docs/export.md, each marked "-- query: NAME" in an sql block.
std::string documented_query(const std::string& name) {
  const std::string doc = read_file(std::string(GPULAB_DOCS_DIR) + "/export.md");
  const auto at = doc.find("-- query: " + name + "\n");
  if (at == std::string::npos) return "";
  const auto start = doc.find('\n', at) + 1;
  return doc.substr(start, doc.find("```", start) - start);
}

TEST(Export, TheDocumentedQueriesReturnWhatTheFixturesHold) {
  if (const auto why = missing(); !why.empty()) GTEST_SKIP() << why;
  TempFolder folder;
  const std::string db = folder / "job.db";
  // Two ranks of one job: the PyTorch operators, and the same with every function twice as long.
  const std::string rank0 = kFixtures + "/outside/torch_ops.json";
  auto doc = nlohmann::json::parse(read_file(rank0));
  for (auto& v : doc["variants"])
    if (v.contains("totals"))
      v["totals"]["total_seconds"] = 2 * v["totals"]["total_seconds"].get<double>();
  const std::string rank1 = folder / "rank1.json";
  std::ofstream(rank1) << doc.dump();
  ASSERT_EQ(
      sh(kBinary + " export --sqlite " + db + " --ranks train " + rank0 + " " + rank1 + " 2>&1")
          .code,
      0);
  const std::vector<std::string> sweep = {kFixtures + "/transpose_4096_h200.json",
                                          kFixtures + "/transpose_h200.json"};
  ASSERT_EQ(sh(kBinary + " export --sqlite " + db + joined(sweep) + " 2>&1").code, 0);

  const auto slowest = documented_query("slowest rank per function");
  ASSERT_FALSE(slowest.empty()) << "docs/export.md lost the query";
  const std::string rows = query(db, slowest);
  const auto functions = report::load_report(rank0).variants.size();
  EXPECT_EQ(static_cast<std::size_t>(std::count(rows.begin(), rows.end(), '\n')), functions)
      << rows;
  EXPECT_EQ(rows.find("|0|"), std::string::npos) << "rank 1 is the slower everywhere:\n" << rows;

  const auto outliers = documented_query("outlier launches");
  ASSERT_FALSE(outliers.empty());
  std::size_t expected = 0;
  for (const auto& file : std::vector<std::string>{rank0, rank1, sweep[0], sweep[1]}) {
    for (const auto& v : report::load_report(file).variants) {
      double sum = 0;
      int timed = 0;
      for (const auto& k : v.kernels)
        if (auto it = k.metrics.find("gpu__time_duration.sum"); it != k.metrics.end())
          sum += it->second, ++timed;
      for (const auto& k : v.kernels)
        if (auto it = k.metrics.find("gpu__time_duration.sum"); it != k.metrics.end())
          expected += it->second > 2 * sum / timed;
    }
  }
  const std::string outlier_rows = query(db, outliers);
  EXPECT_EQ(static_cast<std::size_t>(std::count(outlier_rows.begin(), outlier_rows.end(), '\n')),
            expected)
      << outlier_rows;

  const auto trend = documented_query("a metric over a sweep");
  ASSERT_FALSE(trend.empty());
  std::string want;
  for (const auto& file : sweep) {
    const auto r = report::load_report(file);
    const auto& k = r.find_variant("padded")->kernels.at(0);
    want += fmt::format("{}|{}\n", r.params.at("rows"),
                        k.metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  }
  const std::string got = query(db, trend);
  // sqlite3 prints REALs with 15 significant digits: compare the rows and their first digits.
  ASSERT_EQ(std::count(got.begin(), got.end(), '\n'), 2) << got;
  EXPECT_EQ(got.substr(0, 10), want.substr(0, 10)) << got << "\nwanted\n" << want;
  EXPECT_EQ(got.substr(got.find('\n') + 1, 10), want.substr(want.find('\n') + 1, 10)) << got;
}

// The processor time of this process's waited-for children, user and system.
double children_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// A job's 10,000 profiled launches export within 5 s; an export killed midway (SIGKILL while its
// transaction is open) leaves the database readable and without the half-written report.
TEST(Export, TenThousandLaunchesWithinFiveSecondsAndAKilledExportLeavesNoTrace) {
  if (const auto why = missing(); !why.empty()) GTEST_SKIP() << why;
  TempFolder folder;
  const std::string job = folder / "job.json";
  const auto profile = sh("env TMPDIR=" + folder.path + " " + kBinary +
                          " profile --metrics basic --launch-count 10000 --diagnose --json " + job +
                          " -- " + GPULAB_STAND_IN + " --launches 10000 --counters-from " +
                          kFixtures + "/outside/torch_ops.json 2>&1");
  ASSERT_EQ(profile.code, 0) << profile.text;

  const std::string db = folder / "job.db";
  // Processor time, not wall time: other tests and builds share the machine's cores.
  const double before = children_seconds();
  const auto exported = sh(kBinary + " export --sqlite " + db + " " + job + " 2>&1");
  const double seconds = children_seconds() - before;
  ASSERT_EQ(exported.code, 0) << exported.text;
  std::cout << "10,000 launches exported in " << seconds << " s of processor time\n";
  if (!test::kSanitized) EXPECT_LE(seconds, 5.0);
  EXPECT_EQ(query(db, "SELECT count(*) FROM launches;"), "10000\n");

  // The same report again as a rank of a job (another digest), killed once its journal exists.
  const std::string journal = db + "-journal";
  const auto killed =
      sh("(" + kBinary + " export --sqlite " + db + " --ranks j " + job + " >" +
         folder / "export.out" + " 2>&1 & pid=$!; while [ ! -e " + journal +
         " ] && kill -0 $pid 2>/dev/null; do :; done; kill -9 $pid; wait $pid; echo $?)");
  EXPECT_EQ(killed.text, "137\n") << "killed midway: " << killed.text;
  EXPECT_EQ(query(db,
                  "PRAGMA integrity_check; SELECT count(*) FROM reports; "
                  "SELECT count(*) FROM launches;"),
            "ok\n1\n10000\n");
}

}  // namespace
}  // namespace gpulab
