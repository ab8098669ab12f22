// Every lab's report recorded on each card (`gpulab run --all --diagnose`: full counters, and
// timelines for the traced labs): an NVIDIA H200 (tests/fixtures/labs) and an H100 80GB HBM3
// (tests/fixtures/labs-h100), read and diagnosed again offline: the checks passed there, and
// the decision tree gives each variant a principal finding its lab accepts. This is `gpulab
// selftest` on recorded numbers of both cards, so CI notices when a change to the tree or to an
// expectation breaks it on either. A registered lab without a fixture fails here. A lab that
// needs more GPUs than the recording machine had (the nccl lab, on one GPU) was recorded
// skipping every variant: its fixture is checked for that reason and its other tests skip until
// a machine with enough GPUs records it.
#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/expectations.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab {
namespace {

// A card whose fixtures are recorded: the folder under tests/fixtures and what its reports'
// device name contains.
struct Card {
  const char* folder;
  const char* name;
};
constexpr Card kCards[] = {{"labs", "H200"}, {"labs-h100", "H100"}};
void PrintTo(const Card& card, std::ostream* os) { *os << card.name; }

class LabFixture : public ::testing::TestWithParam<std::tuple<Card, std::string>> {
 protected:
  const Card& card() const { return std::get<0>(GetParam()); }
  const std::string& lab() const { return std::get<1>(GetParam()); }
  report::Report load() const {
    auto r = report::load_report(std::string(GPULAB_FIXTURES_DIR) + "/" + card().folder + "/" +
                                 lab() + ".json");
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

TEST_P(LabFixture, RecordedOnItsCardWithEveryCheckPassed) {
  const auto r = load();
  const auto& spec = labs::lab_or_throw(lab()).spec();
  EXPECT_NE(r.device.name.find(card().name), std::string::npos) << r.device.name;
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
  const auto& spec = labs::lab_or_throw(lab()).spec();
  std::map<std::string, report::Expectation> expected;
  for (const auto& v : spec.variants) expected[v.name] = v.expected;
  for (const auto& j : report::judge_findings(r, expected))
    EXPECT_FALSE(j.failed) << j.variant << ": " << j.result << " (expected " << j.expected.text()
                           << ", obtained " << (j.obtained.empty() ? "none" : j.obtained) << ")";
}

std::vector<std::string> lab_names() {
  std::vector<std::string> names;
  for (const auto* lab : labs::all_labs()) names.push_back(lab->spec().name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllLabs, LabFixture,
                         ::testing::Combine(::testing::ValuesIn(kCards),
                                            ::testing::ValuesIn(lab_names())),
                         [](const ::testing::TestParamInfo<LabFixture::ParamType>& info) {
                           std::string name = std::string(std::get<0>(info.param).name) + "_" +
                                              std::get<1>(info.param);
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace gpulab
