// The labs validate the decision tree (docs/diagnosis.md): each variant's principal finding
// against what its lab expects. One judgement for `gpulab selftest` on a live run and for the
// tests on the reports recorded on each card (tests/fixtures/labs*, an H200 and an H100), so
// that both mean the same by "pass".
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "reports/report.hpp"

namespace gpulab::report {

// What a variant's principal finding may be: one of `any_of` (empty: any finding, or none),
// and none of `none_of`. One finding is the common case; more than one is where the card
// decides (a kernel near a threshold that one card's roof puts on one side and another's on
// the other), and `why` then says so.
struct Expectation {
  std::vector<std::string> any_of;
  std::vector<std::string> none_of;
  std::string why;

  Expectation() = default;
  // One finding, or none expected when empty: the labs' variant tables write just the id.
  Expectation(const char* finding);  // NOLINT(google-explicit-constructor)
  static Expectation one_of(std::initializer_list<const char*> findings, std::string why);
  static Expectation excluding(std::initializer_list<const char*> findings, std::string why);

  bool empty() const { return any_of.empty() && none_of.empty(); }
  bool accepts(const std::string& finding) const;
  // As the self-test's "expected" column shows it: "a", "a|b", "not a, not b", or "-".
  std::string text() const;
};

struct Judgement {
  std::string variant;
  Expectation expected;
  std::string obtained;  // the principal finding; empty when there is none
  std::string result;    // "pass", "pass (no expectation)", "skipped", "FAIL ..." with the cause
  bool failed = false;
  // Of a failing row, the steps of the decision path that decided it: the node that gave the
  // obtained finding and the nodes of the expected ones, with their measured values and
  // thresholds.
  std::vector<PathStep> decided_by;
};

// Judges every variant of a diagnosed report. `expected` maps variant names to their
// expectation (absent: none). A variant passes when its expectation accepts its principal
// finding; a variant measured against a baseline (Report::baseline_of) must also have left
// that baseline's expected findings behind, unless it accepts them too.
std::vector<Judgement> judge_findings(const Report& report,
                                      const std::map<std::string, Expectation>& expected);

}  // namespace gpulab::report
