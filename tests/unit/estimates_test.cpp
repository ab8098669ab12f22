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
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_html.hpp"
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

Report diagnosed(const std::string& relative) {
  Report r = load_report((test::kSourceRoot / relative).string());
  diagnose_report(r, Thresholds{});
  return r;
}

const Finding& principal_of(const Report& r, const std::string& variant) {
  for (const auto& v : r.variants)
    if (v.name == variant) return v.kernels.at(0).diagnosis->findings.at(0);
  throw std::runtime_error("no variant " + variant);
}

TEST(Estimates, AFindingSaysWhatItsFixIsWorthInTextJsonAndHtml) {
  const Report r = diagnosed("tests/fixtures/labs-h100/transpose.json");
  const Finding& f = principal_of(r, "naive");
  ASSERT_EQ(f.id, "uncoalesced-global");
  ASSERT_TRUE(f.estimate);
  EXPECT_EQ(f.estimate->model, "roof");
  // 1182.8 µs now, the work's 537 MB at the 3,029 GB/s roof after: 177.3 µs.
  EXPECT_NEAR(f.estimate->speedup(), 1182.8 / 177.3, 0.05);
  EXPECT_NE(render_diagnosis(r).find("worth: est. 6.7× faster if fixed (its work's bytes at the "
                                     "measured copy roof)"),
            std::string::npos);
  EXPECT_NE(render_html({r}, HtmlPage{}).find("<em>Worth:</em> est. 6.7× faster if fixed"),
            std::string::npos);
  const Report back = from_json(to_json(r));
  const Finding& again = principal_of(back, "naive");
  ASSERT_TRUE(again.estimate);
  EXPECT_DOUBLE_EQ(again.estimate->saved, f.estimate->saved);
  EXPECT_EQ(again.estimate->inputs, f.estimate->inputs);
}

TEST(Estimates, AFindingWhoseModelIsNotCalibratedGivesNone) {
  const Report r = diagnosed("tests/fixtures/labs-h100/spill.json");
  const Finding& f = principal_of(r, "local-array");
  ASSERT_EQ(f.id, "local-memory");
  EXPECT_FALSE(f.estimate);
  EXPECT_EQ(render_diagnosis(r).find("worth:"), std::string::npos);
}

}  // namespace
}  // namespace gpulab::report
