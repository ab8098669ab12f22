// How close each lab comes to its limit (reports/diagnosis/limits.hpp), on the H200 fixtures.
#include <string>

#include <gtest/gtest.h>

#include "reports/diagnosis/limits.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

std::string fixture(const std::string& lab) {
  return std::string(GPULAB_FIXTURES_DIR) + "/labs/" + lab + ".json";
}

TEST(LabLimits, AReferenceIsTheLimitElseTheCopyRoof) {
  struct Row {
    const char* lab;
    const char* best;
    const char* limit;
  };
  for (const Row& row :
       {Row{"transpose", "vectorized", "copy roof"}, Row{"matmul", "warp-tiled", "cublas"},
        Row{"reduction", "warp-shuffle", "cub"}, Row{"vectorize", "float4", "copy roof"}}) {
    const Report r = load_report(fixture(row.lab));
    const LabLimit l = lab_limit(r);
    ASSERT_TRUE(l.best) << row.lab;
    EXPECT_EQ(l.best->name, row.best) << row.lab;
    EXPECT_EQ(l.limit(), row.limit) << row.lab;
    const double expected =
        l.reference ? l.reference->timing.median / l.best->timing.median : l.best->roof_fraction;
    EXPECT_DOUBLE_EQ(l.fraction, expected) << row.lab;
  }
}

TEST(LabLimits, TheBestHasPassedItsCheckAndUnknownsSayNothing) {
  Report r = load_report(fixture("transpose"));
  for (auto& v : r.variants)
    if (v.name == "vectorized") v.check.status = CheckStatus::failed;
  EXPECT_EQ(lab_limit(r).best->name, "padded");
  for (auto& v : r.variants) v.check.status = CheckStatus::failed;
  EXPECT_FALSE(lab_limit(r).best);
  EXPECT_EQ(lab_limit(r).text(), "-");
  Report no_roof = load_report(fixture("transpose"));
  for (auto& v : no_roof.variants) v.roof_fraction = 0;
  EXPECT_EQ(lab_limit(no_roof).text(), "-");
}

}  // namespace
}  // namespace gpulab::report
