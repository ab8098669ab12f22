// The labs validate the decision tree (docs/diagnosis.md): each variant's principal finding
// against the one its lab expects. One judgement for `gpulab selftest` on a live run and for
// the tests on the reports recorded on the H200, so that both mean the same by "pass".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/report.hpp"

namespace gpulab::report {

struct Judgement {
  std::string variant;
  std::string expected;  // the expected principal finding; empty when none is expected
  std::string obtained;  // the principal finding; empty when there is none
  std::string result;    // "pass", "pass (no expectation)", "skipped", "FAIL ..." with the cause
  bool failed = false;
};

// Judges every variant of a diagnosed report. `expected` maps variant names to their expected
// principal finding (absent or empty: none). A variant passes when its principal finding is
// the expected one; a variant measured against a baseline (Report::baseline_of) must also
// have left that baseline's expected finding behind, unless it expects the same finding.
std::vector<Judgement> judge_findings(const Report& report,
                                      const std::map<std::string, std::string>& expected);

}  // namespace gpulab::report
