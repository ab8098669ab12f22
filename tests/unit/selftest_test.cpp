// The self-test's verdict (app/cmd_selftest.cpp) on recorded reports: it names the card, and a
// failing row says what decided it, with the measured value and the threshold.
#include <filesystem>

#include <gtest/gtest.h>

#include "app/commands.hpp"
#include "labs/harness/registry.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"
#include "unit/temp_folder.hpp"

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
  // A roof threshold above what the vectorized transpose reaches on the H100 (over 90% of its
  // copy roof) turns its expected memory-bound-at-roof into below-roof.
  const auto v = judge_transpose("labs-h100/transpose.json", {"at_roof.roof_fraction=0.99"});
  EXPECT_TRUE(v.failed);
  EXPECT_NE(v.text.find("transpose/vectorized: at-roof: dram_over_model = 0.958 (threshold <= "
                        "1.15), roof_fraction = 94.0% (threshold >= 99.0%) → no\n"),
            std::string::npos)
      << v.text;
  EXPECT_NE(v.text.find("selftest: FAILED on NVIDIA H100 80GB HBM3\n"), std::string::npos)
      << v.text;
}

// `selftest --reports DIR` judges saved reports without a GPU; --estimates adds the calibration
// of the estimated gains on the labs' fixes (docs/estimates.md).
TEST(Selftest, JudgesSavedReportsAndCalibratesTheEstimates) {
  const auto r = test::run_cli({"selftest", "--reports", kFixtures + "/labs-h100", "--labs",
                                "transpose,spill", "--estimates"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("selftest: passed on NVIDIA H100 80GB HBM3\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| transpose | naive → padded | uncoalesced-global | roof |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("local-memory: median "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("| coalescing |"), std::string::npos) << "only the labs asked for";

  const auto plain = test::run_cli({"selftest", "--reports", kFixtures + "/labs-h100"});
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("estimates findings give"), std::string::npos) << "only on request";
}

TEST(Selftest, SavedReportsThatAreMissingOrOfAnotherLabAreExit2) {
  test::TempFolder folder;
  const auto none = test::run_cli({"selftest", "--reports", folder / "absent"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("not a folder"), std::string::npos) << none.err;

  // Of every lab, a folder holding only the transpose report judges that one and says so.
  std::filesystem::copy_file(kFixtures + "/labs-h100/transpose.json", folder / "transpose.json");
  const auto some = test::run_cli({"selftest", "--reports", folder.path});
  EXPECT_EQ(some.code, 0) << some.err;
  EXPECT_NE(some.err.find("holds no report of coalescing: not judged"), std::string::npos)
      << some.err;
  // A lab named on the command line must have its report.
  const auto named = test::run_cli({"selftest", "--reports", folder.path, "--labs", "spill"});
  EXPECT_EQ(named.code, 2) << named.out;
  EXPECT_NE(named.err.find("spill.json"), std::string::npos) << named.err;
  // A report under another lab's name is not judged against that lab's expectations.
  std::filesystem::copy_file(kFixtures + "/labs-h100/transpose.json", folder / "spill.json");
  const auto other = test::run_cli({"selftest", "--reports", folder.path, "--labs", "spill"});
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.err.find("a report of transpose, not of spill"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace gpulab::app
