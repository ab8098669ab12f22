// The selftest's judgement (reports/diagnosis/expectations.hpp) on small hand-built reports: which
// baseline a variant is held against, and what passes.
#include <gtest/gtest.h>

#include "reports/diagnosis/expectations.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

// A variant with one diagnosed kernel whose findings are `findings`, principal first.
Variant variant(const std::string& name, Role role, const std::vector<std::string>& findings) {
  Variant v;
  v.name = name;
  v.role = role;
  v.check.status = CheckStatus::passed;
  Kernel& k = v.kernels.emplace_back();
  k.name = name;
  k.diagnosis.emplace();
  for (const auto& id : findings) k.diagnosis->findings.push_back(Finding{id});
  return v;
}

// Two experiments in one lab, as the spill lab has: each baseline before its own variants.
Report two_experiments(const std::vector<std::string>& last_findings) {
  Report r;
  r.variants = {variant("first", Role::baseline, {"local-memory"}),
                variant("first-fixed", Role::optimized, {"compute-bound"}),
                variant("second", Role::baseline, {"low-occupancy"}),
                variant("second-fixed", Role::optimized, last_findings)};
  return r;
}

const std::map<std::string, Expectation> kExpected = {
    {"first", "local-memory"}, {"second", "low-occupancy"}, {"second-fixed", "compute-bound"}};

TEST(Expectations, AVariantIsHeldAgainstTheBaselineItIsMeasuredAgainst) {
  const auto r = two_experiments({"compute-bound", "local-memory"});
  EXPECT_EQ(r.baseline_of(r.variants[3]), &r.variants[2]);
  EXPECT_EQ(r.baseline_of(r.variants[1]), &r.variants[0]);
  // second-fixed still carries the first experiment's finding: not its baseline's, so it passes.
  const auto j = judge_findings(r, kExpected);
  ASSERT_EQ(j.size(), 4u);
  for (const auto& one : j) EXPECT_FALSE(one.failed) << one.variant << ": " << one.result;
  EXPECT_EQ(j[1].result, "pass (no expectation)");
  EXPECT_EQ(j[3].result, "pass");
}

TEST(Expectations, AVariantThatKeepsItsBaselinesFindingFails) {
  const auto j = judge_findings(two_experiments({"compute-bound", "low-occupancy"}), kExpected);
  EXPECT_TRUE(j[3].failed);
  EXPECT_EQ(j[3].result, "FAIL (still low-occupancy)");
}

TEST(Expectations, AnotherPrincipalFindingFails) {
  const auto j = judge_findings(two_experiments({"latency-bound"}), kExpected);
  EXPECT_TRUE(j[3].failed);
  EXPECT_EQ(j[3].obtained, "latency-bound");
  EXPECT_EQ(j[3].expected.text(), "compute-bound");
}

TEST(Expectations, NoDiagnosisOrAFailedCheckFails) {
  auto r = two_experiments({"compute-bound"});
  r.variants[1].kernels[0].diagnosis.reset();
  r.variants[2].check.status = CheckStatus::failed;
  const auto j = judge_findings(r, kExpected);
  EXPECT_EQ(j[1].result, "FAIL (no counters)");
  EXPECT_EQ(j[2].result, "FAIL (check)");
}

TEST(Expectations, OneOfSeveralFindingsWhereTheCardDecides) {
  auto expected = kExpected;
  expected["second-fixed"] = Expectation::one_of(
      {"memory-bound-below-roof", "memory-bound-at-roof"}, "the card's bandwidth decides");
  EXPECT_EQ(expected["second-fixed"].text(), "memory-bound-below-roof|memory-bound-at-roof");
  for (const char* principal : {"memory-bound-below-roof", "memory-bound-at-roof"})
    EXPECT_EQ(judge_findings(two_experiments({principal}), expected)[3].result, "pass")
        << principal;
  const auto j = judge_findings(two_experiments({"compute-bound"}), expected);
  EXPECT_EQ(j[3].result, "FAIL");
  // The baseline's finding must still be left behind, as below or at the roof.
  EXPECT_EQ(judge_findings(two_experiments({"memory-bound-at-roof", "low-occupancy"}), expected)[3]
                .result,
            "FAIL (still low-occupancy)");
}

TEST(Expectations, ExclusionsRefuseOnlyWhatTheyName) {
  auto expected = kExpected;
  expected["second-fixed"] =
      Expectation::excluding({"low-occupancy", "shared-bank-conflicts"}, "any finding but these");
  EXPECT_EQ(expected["second-fixed"].text(), "not low-occupancy, not shared-bank-conflicts");
  EXPECT_EQ(judge_findings(two_experiments({"latency-bound"}), expected)[3].result, "pass");
  EXPECT_EQ(judge_findings(two_experiments({"shared-bank-conflicts"}), expected)[3].result, "FAIL");
  EXPECT_EQ(Expectation().text(), "-");
  EXPECT_EQ(Expectation("").text(), "-") << "an empty id expects nothing";
}

TEST(Expectations, AFailingRowCarriesTheStepsThatDecidedIt) {
  auto r = two_experiments({"latency-bound"});
  auto& path = r.variants[3].kernels[0].diagnosis->path;
  path.push_back(PathStep{"bottleneck", 0, "", "", {}, "neither"});
  path.push_back(PathStep{"compute-roof", 1, "", "", {}, "no"});  // expected compute-bound
  path.push_back(PathStep{"latency", 1, "", "", {}, "yes", "latency-bound"});
  const auto j = judge_findings(r, kExpected);
  ASSERT_TRUE(j[3].failed);
  ASSERT_EQ(j[3].decided_by.size(), 2u);
  EXPECT_EQ(j[3].decided_by[0].node, "compute-roof") << "the expected finding's node, answered no";
  EXPECT_EQ(j[3].decided_by[1].node, "latency") << "the node that gave the obtained finding";
  EXPECT_TRUE(j[0].decided_by.empty()) << "a passing row needs no cause";
}

}  // namespace
}  // namespace gpulab::report
