// The self-test's verdict (app/cmd_selftest.cpp) on recorded reports: it names the card, and a
// failing row says what decided it, with the measured value and the threshold.
#include <gtest/gtest.h>

#include "app/commands.hpp"
#include "labs/harness/registry.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

const std::string kFixtures = GPULAB_FIXTURES_DIR;

SelftestVerdict judge_transpose(const std::string& fixture, const std::vector<std::string>& set) {
  auto report = report::load_report(kFixtures + "/" + fixture);
  diagnose_into(report, parse_thresholds(set));
  return judge_labs({&labs::lab_or_throw("transpose")}, {report});
}

TEST(Selftest, NamesTheCard) {
  const auto h100 = judge_transpose("labs-h100/transpose.json", {});
  EXPECT_FALSE(h100.failed) << h100.text;
  EXPECT_NE(h100.text.find("selftest: passed on NVIDIA H100 80GB HBM3\n"), std::string::npos)
      << h100.text;
  const auto h200 = judge_transpose("labs/transpose.json", {});
  EXPECT_NE(h200.text.find("selftest: passed on NVIDIA H200"), std::string::npos) << h200.text;
}

TEST(Selftest, AFailingRowSaysWhatDecidedIt) {
  // A roof threshold above what the vectorized transpose reaches on the H100 (94% of its copy
  // roof) turns its expected memory-bound-at-roof into below-roof.
  const auto v = judge_transpose("labs-h100/transpose.json", {"at_roof.roof_fraction=0.99"});
  EXPECT_TRUE(v.failed);
  EXPECT_NE(v.text.find("transpose/vectorized: at-roof: dram_over_model = 0.958 (threshold <= "
                        "1.15), roof_fraction = 94.0% (threshold >= 99.0%) → no\n"),
            std::string::npos)
      << v.text;
  EXPECT_NE(v.text.find("selftest: FAILED on NVIDIA H100 80GB HBM3\n"), std::string::npos)
      << v.text;
}

}  // namespace
}  // namespace gpulab::app
