// The selftest's judgement (reports/expectations.hpp) on small hand-built reports: which
// baseline a variant is held against, and what passes.
#include <gtest/gtest.h>

#include "reports/expectations.hpp"

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

const std::map<std::string, std::string> kExpected = {
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
  EXPECT_EQ(j[3].expected, "compute-bound");
}

TEST(Expectations, NoDiagnosisOrAFailedCheckFails) {
  auto r = two_experiments({"compute-bound"});
  r.variants[1].kernels[0].diagnosis.reset();
  r.variants[2].check.status = CheckStatus::failed;
  const auto j = judge_findings(r, kExpected);
  EXPECT_EQ(j[1].result, "FAIL (no counters)");
  EXPECT_EQ(j[2].result, "FAIL (check)");
}

}  // namespace
}  // namespace gpulab::report
