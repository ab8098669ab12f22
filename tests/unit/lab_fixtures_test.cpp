// Every lab's report recorded on the H200 (tests/fixtures/labs, `gpulab run --all --diagnose`:
// full counters, and timelines for the traced labs), read and diagnosed again offline: the
// checks passed there, and the decision tree gives each variant the principal finding its lab
// expects. This is `gpulab selftest` on recorded numbers, so CI notices when a change to the
// tree breaks an expectation. A registered lab without a fixture fails here. A lab that needs
// more GPUs than the recording machine had (the nccl lab, on one H200) was recorded skipping
// every variant: its fixture is checked for that reason and its other tests skip until a
// machine with enough GPUs records it.
#include <algorithm>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "labs/registry.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis.hpp"
#include "reports/expectations.hpp"
#include "reports/render_text.hpp"
#include "reports/report_json.hpp"

namespace gpulab {
namespace {

class LabFixture : public ::testing::TestWithParam<std::string> {
 protected:
  report::Report load() const {
    auto r = report::load_report(std::string(GPULAB_FIXTURES_DIR) + "/labs/" + GetParam() + ".json");
    report::derive_all(r);
    report::diagnose_report(r, report::Thresholds());
    return r;
  }
};

// Every variant skipped because the machine had too few GPUs; fails the test when some were
// skipped for another reason or others ran.
bool skipped_for_want_of_gpus(const report::Report& r) {
  const auto skipped = [](const report::Variant& v) {
    return v.status == report::VariantStatus::skipped;
  };
  if (r.variants.empty() || !std::all_of(r.variants.begin(), r.variants.end(), skipped)) {
    for (const auto& v : r.variants)
      EXPECT_FALSE(skipped(v)) << v.name << " skipped: " << v.skip_reason;
    return false;
  }
  for (const auto& v : r.variants)
    EXPECT_NE(v.skip_reason.find("needs two or more GPUs"), std::string::npos)
        << v.name << " skipped: " << v.skip_reason;
  return true;
}

#define GPULAB_SKIP_IF_RECORDED_WITHOUT_ENOUGH_GPUS(report)                   \
  if (skipped_for_want_of_gpus(report))                                       \
  GTEST_SKIP() << "SKIPPED: recorded where the lab had too few GPUs to run: " \
               << (report).variants.front().skip_reason

TEST_P(LabFixture, RecordedOnTheH200WithEveryCheckPassed) {
  const auto r = load();
  const auto& spec = labs::lab_or_throw(GetParam()).spec();
  EXPECT_NE(r.device.name.find("H200"), std::string::npos);
  EXPECT_EQ(r.lab.name, spec.name);
  ASSERT_EQ(r.variants.size(), spec.variants.size());
  GPULAB_SKIP_IF_RECORDED_WITHOUT_ENOUGH_GPUS(r);
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
    if (spec.traced) {
      ASSERT_TRUE(v.timeline.has_value()) << v.name;
      EXPECT_GT(v.timeline->summary.span_seconds, 0) << v.name;
    } else {
      EXPECT_TRUE(v.counters.collected) << v.name;
    }
  }
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
}

// The text report has a row per variant, in the lab's order, that says its check passed.
TEST_P(LabFixture, TextShowsEveryVariantPassed) {
  const auto r = load();
  GPULAB_SKIP_IF_RECORDED_WITHOUT_ENOUGH_GPUS(r);
  std::istringstream text(report::render_text(r));
  std::size_t next = 0;
  for (std::string line; std::getline(text, line) && next < r.variants.size();) {
    const auto& v = r.variants[next];
    if (line.rfind(v.name + " ", 0) == 0 && line.find(" passed ") != std::string::npos) ++next;
  }
  EXPECT_EQ(next, r.variants.size())
      << "no row for " << r.variants[std::min(next, r.variants.size() - 1)].name << " passed";
}

TEST_P(LabFixture, PrincipalFindingsAreTheExpectedOnes) {
  const auto r = load();
  GPULAB_SKIP_IF_RECORDED_WITHOUT_ENOUGH_GPUS(r);
  const auto& spec = labs::lab_or_throw(GetParam()).spec();
  std::map<std::string, std::string> expected;
  for (const auto& v : spec.variants) expected[v.name] = v.expected_finding;
  for (const auto& j : report::judge_findings(r, expected))
    EXPECT_FALSE(j.failed) << j.variant << ": " << j.result << " (expected "
                           << (j.expected.empty() ? "none" : j.expected) << ", obtained "
                           << (j.obtained.empty() ? "none" : j.obtained) << ")";
}

std::vector<std::string> lab_names() {
  std::vector<std::string> names;
  for (const auto* lab : labs::all_labs()) names.push_back(lab->spec().name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllLabs, LabFixture, ::testing::ValuesIn(lab_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace gpulab
