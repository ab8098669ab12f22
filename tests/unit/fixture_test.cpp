// Reports recorded on the H200 by `gpulab run` (tests/fixtures/README.md says how), read back
// on the CPU: the schema, the derived metrics, the text rendering, and the signature the
// transpose lab exists to show, on real numbers.
#include <gtest/gtest.h>

#include "reports/base/input_file.hpp"
#include "reports/derived.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

namespace d = derived;

const std::string kTranspose = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";

const Report& transpose() {
  static const Report r = load_report(kTranspose);
  return r;
}

double derived_of(const Report& r, const std::string& variant, const char* name) {
  const auto* v = r.find_variant(variant);
  EXPECT_NE(v, nullptr) << variant;
  return v->kernels.at(0).derived.at(name);
}

TEST(TransposeFixture, IsACompleteH200Report) {
  const auto& r = transpose();
  EXPECT_EQ(r.lab.name, "transpose");
  EXPECT_NE(r.device.name.find("H200"), std::string::npos) << r.device.name;
  EXPECT_EQ(r.device.chip, "GH100");
  EXPECT_GT(r.device.roofs.copy_bandwidth, 0);
  EXPECT_EQ(r.params.at("rows"), 8192);
  ASSERT_EQ(r.variants.size(), 4u);
  EXPECT_EQ(r.variants[0].name, "naive");
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, CheckStatus::passed) << v.name;
    EXPECT_TRUE(v.counters.collected) << v.name;
    EXPECT_GT(v.counters.passes, 1) << v.name;
    ASSERT_EQ(v.kernels.size(), 1u) << v.name;
    EXPECT_GT(v.kernels[0].attributes.registers_per_thread, 0) << v.name;
  }
}

// Written again, a report recorded in an earlier schema is the same report in this one: a lab's
// kernels kept their form.
TEST(TransposeFixture, RoundTripsThroughJson) {
  auto original = nlohmann::json::parse(read_file(kTranspose));
  ASSERT_NE(original.at("schema"), kSchema);
  original["schema"] = kSchema;
  EXPECT_EQ(to_json(from_json(original)), original);
}

TEST(TransposeFixture, StoredDerivedMetricsMatchTheFormulas) {
  Report r = transpose();
  std::vector<std::map<std::string, double>> stored;
  for (const auto& v : r.variants) stored.push_back(v.kernels.at(0).derived);
  derive_all(r);
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const auto& now = r.variants[i].kernels[0].derived;
    ASSERT_EQ(now.size(), stored[i].size()) << r.variants[i].name;
    for (const auto& [name, value] : now) EXPECT_DOUBLE_EQ(value, stored[i].at(name)) << name;
  }
}

TEST(TransposeFixture, ShowsTheTransposeSignature) {
  const auto& r = transpose();
  EXPECT_GE(derived_of(r, "tiled", d::shld_wavefronts_per_inst), 16.0);
  EXPECT_LE(derived_of(r, "padded", d::shld_wavefronts_per_inst), 1.5);
  EXPECT_LE(derived_of(r, "swizzled", d::shld_wavefronts_per_inst), 1.5);
  for (const char* v : {"tiled", "padded", "swizzled"})
    EXPECT_NEAR(derived_of(r, v, d::dram_read_over_model), 1.0, 0.05) << v;
  EXPECT_GE(derived_of(r, "naive", d::gst_sectors_per_request), 16.0);
  EXPECT_GE(r.find_variant("padded")->speedup, 3.0);
  EXPECT_GE(r.find_variant("swizzled")->speedup, 3.0);
}

TEST(TransposeFixture, TextRenderingShowsEveryVariantBaselineFirst) {
  const std::string text = render_text(transpose());
  std::size_t last = 0;
  for (const char* v : {"naive", "tiled", "padded", "swizzled"}) {
    const auto at = text.find(v, last);
    ASSERT_NE(at, std::string::npos) << v;
    last = at;
  }
  for (const char* s : {"passed", "shared ld wavefronts/inst", "DRAM read / model",
                        "global st sectors/request", "speedup", "replay passes"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
  EXPECT_EQ(text.find("failed"), std::string::npos);
}

// The spill lab's report carries what ptxas said of each kernel at build time.
TEST(SpillFixture, ShowsPtxasSpillsOnlyForTheCappedKernel) {
  const auto r = load_report(std::string(GPULAB_FIXTURES_DIR) + "/labs/spill.json");
  const auto& capped = r.find_variant("capped")->kernels.at(0).attributes;
  const auto& uncapped = r.find_variant("uncapped")->kernels.at(0).attributes;
  ASSERT_TRUE(capped.spill_store_bytes && capped.spill_load_bytes);
  EXPECT_GT(*capped.spill_store_bytes, 0);
  EXPECT_GT(*capped.spill_load_bytes, 0);
  EXPECT_EQ(uncapped.spill_store_bytes.value_or(-1), 0);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("spill stores (ptxas)"), std::string::npos) << text;
}

// The streams lab's report: a timeline per variant, rendered with its figures and chart.
TEST(StreamsFixture, TimelinesShowOverlapOnlyWhereStreamsOverlap) {
  const auto r = load_report(std::string(GPULAB_FIXTURES_DIR) + "/labs/streams.json");
  for (const auto& v : r.variants) ASSERT_TRUE(v.timeline.has_value()) << v.name;
  EXPECT_LT(r.find_variant("serial-pinned")->timeline->summary.overlap_fraction, 0.05);
  EXPECT_GT(r.find_variant("overlapped")->timeline->summary.overlap_fraction, 0.5);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("overlap (kernels with transfers)"), std::string::npos) << text;
  EXPECT_NE(text.find("stream "), std::string::npos) << text;
  EXPECT_EQ(text.find("eff. bandwidth"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpulab::report
