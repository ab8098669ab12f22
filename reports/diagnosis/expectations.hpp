// The labs validate the decision tree (docs/diagnosis.md): each variant's principal finding
// against what its lab expects. One judgement for `gpulab selftest` on a live run and for the
// tests on the reports recorded on each card (tests/fixtures/labs*, an H200 and an H100), so
// that both mean the same by "pass".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/diagnosis_model.hpp"
#include "reports/expectation.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

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
