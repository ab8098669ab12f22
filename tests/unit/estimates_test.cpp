// Estimated gains calibrated on the labs: every pair of a baseline and an optimized variant that
// no longer has the baseline's principal finding, on each card's recorded fixtures (the table is
// docs/estimates.md's, checked by Docs.ExamplesAreWhatThisBuildPrints). The estimates findings
// give meet the bounds on every pair; a model that does not gives no estimate.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "labs/harness/registry.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/estimates.hpp"
#include "reports/report_json.hpp"
#include "unit/lab_markers.hpp"

namespace gpulab::report {
namespace {

std::vector<CalibrationRow> calibrate_card(const std::string& folder) {
  std::vector<CalibrationRow> rows;
  for (const auto* lab : labs::all_labs()) {
    const auto path = test::kSourceRoot / "tests/fixtures" / folder / (lab->spec().name + ".json");
    if (!std::filesystem::exists(path)) continue;
    Report r = load_report(path.string());
    diagnose_report(r, Thresholds{});
    for (auto& row : calibrate(r)) rows.push_back(std::move(row));
  }
  return rows;
}

TEST(Estimates, TheEstimatesFindingsGiveMeetTheBoundsOnEveryLabPair) {
  for (const std::string card : {"labs", "labs-h100"}) {
    std::vector<double> errors;
    for (const auto& row : calibrate_card(card)) {
      if (!row.calibrated) continue;
      ASSERT_TRUE(row.error()) << card << " " << row.lab << " " << row.baseline;
      EXPECT_LT(*row.error(), std::log(2.0))
          << card << " " << row.lab << ": " << row.baseline << " → " << row.fix;
      errors.push_back(*row.error());
    }
    ASSERT_GE(errors.size(), 4u) << card;
    std::sort(errors.begin(), errors.end());
    EXPECT_LE(errors[errors.size() / 2], 0.15) << card << ": the median error";
  }
}

TEST(Estimates, TheRoofModelNeverPredictsLessThanTheRoofAllows) {
  Report r;
  r.device.roofs.copy_bandwidth = 1e12;
  r.work.bytes_read = r.work.bytes_written = 5e8;  // 1 GB: 1 ms at the roof
  Variant v;
  v.timing.median = 4e-3;
  const auto e = estimate(r, v, "uncoalesced-global");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->model, "roof");
  EXPECT_NEAR(e->saved, 0.75, 1e-12);
  EXPECT_NEAR(e->speedup(), 4.0, 1e-9);
  v.timing.median = 0.5e-3;  // already faster than the roof's time: nothing to save
  EXPECT_EQ(estimate(r, v, "uncoalesced-global")->saved, 0.0);
  EXPECT_FALSE(estimate(r, v, "latency-bound")) << "no model, no number";
  EXPECT_TRUE(model_estimate(r, v, "local-memory")) << "a model, not calibrated";
  EXPECT_FALSE(estimate(r, v, "local-memory")) << "so no estimate";
}

}  // namespace
}  // namespace gpulab::report
