// The report's JSON form: round trip, schema check, and rejection of bad files.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

// A small report exercising every field (values are arbitrary inputs, not measurements).
Report sample_report() {
  Report r;
  r.tool = {"gpulab", "0.1.0", "abc123"};
  r.argv = {"gpulab", "run", "demo"};
  r.created_utc = "2026-01-01T00:00:00Z";
  r.device.name = "Example GPU";
  r.device.chip = "GH100";
  r.device.cc_major = 9;
  r.device.cc_minor = 0;
  r.device.sm_count = 4;
  r.device.l2_bytes = 1 << 20;
  r.device.roofs = {2e12, 1.5e12, 1 << 30};
  r.device.counters_available = true;
  r.lab = {"demo", "topic", "summary"};
  r.params = {{"rows", 64}, {"cols", 32}};
  r.work = {1024, 2048, 10};
  Variant v;
  v.name = "base";
  v.role = Role::baseline;
  v.description = "the baseline";
  v.check.status = CheckStatus::passed;
  v.check.elements = 2048;
  v.timing = {3, 2, false, {1e-3, 2e-3}, 1.5e-3, 1e-3, 2e-3, 1.5e-3, 7e-4};
  v.work = WorkModel{512, 256, 0};  // a variant with its own work model
  v.effective_bandwidth = 2e6;
  v.roof_fraction = 0.5;
  v.speedup = 1.0;
  v.counters = {true, "basic", 7, "kernel", "none", "", 1.25};
  Kernel k;
  k.name = "demo_kernel";
  k.attributes.registers_per_thread = 32;
  k.attributes.block_threads = 256;
  k.attributes.theoretical_occupancy = 1.0;
  k.metrics = {{"dram__bytes_read.sum", 1024.0}};
  k.derived = {{"dram_read_over_model", 1.0}};
  v.kernels = {k};
  Variant skipped;
  skipped.name = "multi-gpu";
  skipped.status = VariantStatus::skipped;
  skipped.skip_reason = "needs 2 GPUs";
  skipped.check.status = CheckStatus::skipped;
  r.variants = {v, skipped};
  r.warnings = {"a warning"};
  return r;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/gpulab_" + std::to_string(::getpid()) + "_" + name;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ReportJson, RoundTripIsLossless) {
  const auto json = to_json(sample_report());
  EXPECT_EQ(json.at("schema"), kSchema);
  const Report back = from_json(json);
  EXPECT_EQ(to_json(back), json);
  EXPECT_EQ(back.variants.at(1).status, VariantStatus::skipped);
  EXPECT_EQ(back.variants.at(0).kernels.at(0).attributes.registers_per_thread, 32);
}

TEST(ReportJson, SaveAndLoadFile) {
  const auto path = temp_path("roundtrip.json");
  save_report(path, sample_report());
  EXPECT_EQ(to_json(load_report(path)), to_json(sample_report()));
  std::remove(path.c_str());
}

TEST(ReportJson, NonFiniteMetricsAreLeftOutAndNullsSkipped) {
  auto r = sample_report();
  r.variants[0].kernels[0].metrics["lts__t_sector_hit_rate.pct"] = NAN;
  auto json = to_json(r);
  EXPECT_FALSE(json["variants"][0]["kernels"][0]["metrics"].contains("lts__t_sector_hit_rate.pct"));
  json["variants"][0]["kernels"][0]["metrics"]["sm__throughput.avg.pct_of_peak_sustained_elapsed"] =
      nullptr;
  const auto back = from_json(json);
  EXPECT_EQ(back.variants[0].kernels[0].metrics.size(), 1u);
}

void expect_rejected(const nlohmann::json& json, const std::string& fragment) {
  try {
    from_json(json);
    FAIL() << "accepted; expected an error mentioning " << fragment;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ReportJson, RejectsWrongSchemaVersion) {
  auto json = to_json(sample_report());
  json["schema"] = "gpulab.report/99";
  expect_rejected(json, "gpulab.report/99");
  json.erase("schema");
  expect_rejected(json, "schema");
}

TEST(ReportJson, ErrorsNameTheFieldPath) {
  auto json = to_json(sample_report());
  json["variants"][0]["timing"]["median"] = "fast";
  expect_rejected(json, "variants[0].timing.median: expected a number");
  json = to_json(sample_report());
  json["variants"][1].erase("name");
  expect_rejected(json, "variants[1].name: missing");
  json = to_json(sample_report());
  json["variants"][0]["role"] = "hero";
  expect_rejected(json, "'hero' is not one of");
  json = to_json(sample_report());
  json["params"]["rows"] = 1.5;
  expect_rejected(json, "params.rows: expected an integer");
  expect_rejected(nlohmann::json::array(), "expected a JSON object");
  // A count beyond any uint64 (the fuzzer's 6.7e77 elements) or below zero is refused, not cast.
  for (const double elements : {6.7e77, -1.0}) {
    json = to_json(sample_report());
    json["variants"][0]["check"]["elements"] = elements;
    expect_rejected(json, "variants[0].check.elements: expected a count from 0 to 2^64 - 1");
  }
  json = to_json(sample_report());
  json["device"]["l2_bytes"] = 52428800.0;  // a whole float is a count
  EXPECT_EQ(from_json(json).device.l2_bytes, 52428800u);
}

TEST(ReportJson, LoadRejectsTruncatedAndMalformedFiles) {
  const auto path = temp_path("bad.json");
  const std::string full = to_json(sample_report()).dump(2);
  write_text(path, full.substr(0, full.size() / 2));
  try {
    load_report(path);
    FAIL() << "truncated file accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << "names the file";
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  write_text(path, "");
  EXPECT_THROW(load_report(path), UsageError);
  write_text(path, R"({"schema": 35E03551342385722})");  // no double holds it
  EXPECT_THROW(load_report(path), UsageError);
  std::remove(path.c_str());
  EXPECT_THROW(load_report(path), UsageError) << "missing file";
  EXPECT_THROW(load_report(::testing::TempDir()), UsageError) << "a directory";
}

}  // namespace
}  // namespace gpulab::report
