// What fixing a finding is worth: the fraction of the variant's time a fix would save, by a
// model that names its inputs, and the calibration of those models on the labs, whose fixes
// were made and measured (docs/estimates.md). Where no model applies there is no estimate.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/report.hpp"

namespace gpulab::report {

// A model's estimate for finding `finding_id` of `v` (one of `r`'s variants), calibrated or not;
// none where its rule declares no model (Rule::estimate_model):
// - "roof" (access-pattern and local-memory findings): after the fix the variant
//   moves only the bytes its work needs, at the copy roof measured on this device; never less
//   time than that, so never more than the roof allows.
// - "tail" (the tail effect): the last wave's idle share of the waves, saved when the grid fills
//   whole waves.
std::optional<Estimate> model_estimate(const Report& r, const Variant& v,
                                       const std::string& finding_id);

// Whether the finding's rule declares its model calibrated: it met the bounds on every lab pair
// of both cards' fixtures (docs/estimates.md: median error at most 0.15, none beyond a factor of
// 2).
bool calibrated(const std::string& finding_id);

// What a finding says it is worth: its model's estimate where the model is calibrated, else
// none ("no estimate").
std::optional<Estimate> estimate(const Report& r, const Variant& v, const std::string& finding_id);

// One lab pair: a baseline whose principal finding an optimized variant of the same lab no
// longer has, the baseline's time after the fix as its model predicts and the variant's as
// measured. A pair compares one fix of one computation: the variant does the same work (the
// same bytes to move) and has none of the findings the model puts time on (a tiled transpose
// trades its uncoalesced store for bank conflicts: two changes, not one fix).
struct CalibrationRow {
  std::string lab, baseline, fix, finding;
  std::optional<double> predicted;  // seconds; none without an estimate
  double measured = 0;              // seconds
  std::string model;
  bool calibrated = false;  // the finding's estimate is shown (see calibrated())
  // |log(predicted / measured)|: 0.15 is within about 16%, log 2 a factor of two.
  std::optional<double> error() const;
};

// The pairs of a diagnosed report (diagnose_report).
std::vector<CalibrationRow> calibrate(const Report& r);

// The table in Markdown, then the median and worst error, overall and per finding.
std::string calibration_table(const std::vector<CalibrationRow>& rows);

}  // namespace gpulab::report
