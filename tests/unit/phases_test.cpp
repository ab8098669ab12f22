// Where a lab run's wall time went (Report::phases, `run --verbose`): kept in the JSON, one line
// for a lab, a table over the labs of `run --all` with every phase any of them had.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/base/errors.hpp"
#include "reports/render/render_phases.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::report {
namespace {

const std::string kFixtures = std::string(GPULAB_FIXTURES_DIR) + "/labs-h100/";

Report with_phases(const char* lab, std::vector<PhaseTime> phases) {
  Report r = load_report(kFixtures + lab + ".json");
  r.phases = std::move(phases);
  return r;
}

TEST(Phases, KeptInTheJsonAndShownAsALine) {
  const Report r = with_phases(
      "transpose", {{"device", 0.012}, {"setup", 0.41}, {"checks", 1.2}, {"timing", 0.3}});
  const Report back = from_json(to_json(r));
  ASSERT_EQ(back.phases.size(), 4u);
  EXPECT_EQ(back.phases[2].phase, "checks");
  EXPECT_DOUBLE_EQ(back.phases[2].seconds, 1.2);
  EXPECT_EQ(phases_line(back),
            "where the time went: device 12.0 ms · setup 410 ms · checks 1.20 s · timing 300 ms "
            "(1.92 s)\n");

  const Report none = load_report(kFixtures + "transpose.json");
  EXPECT_EQ(phases_line(none), "") << "a report from before phases were kept";
  EXPECT_FALSE(to_json(none).contains("phases"));

  auto doc = to_json(r);
  doc["phases"][1]["seconds"] = -1;
  try {
    from_json(doc);
    ADD_FAILURE() << "a negative phase was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("phases[1].seconds"), std::string::npos) << e.what();
  }
}

TEST(Phases, TheTableOfRunAllHasEveryPhaseAndTheTotals) {
  const std::vector<Report> reports{
      with_phases("transpose", {{"setup", 0.5}, {"checks", 1.0}, {"counters", 2.0}}),
      with_phases("streams", {{"setup", 0.25}, {"trace", 0.75}}),
  };
  const std::string table = render_phase_table(reports, Style{});
  EXPECT_EQ(table,
            "where the time went, per lab (wall time):\n"
            "lab         setup  checks  counters   trace   total\n"
            "transpose  500 ms  1.00 s    2.00 s       -  3.50 s\n"
            "streams    250 ms       -         -  750 ms  1.00 s\n"
            "all        750 ms  1.00 s    2.00 s  750 ms  4.50 s\n");
  EXPECT_EQ(render_phase_table({load_report(kFixtures + "transpose.json")}, Style{}), "");
}

}  // namespace
}  // namespace gpulab::report
