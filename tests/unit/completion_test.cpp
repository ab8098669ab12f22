// Completion offers what the commands accept, from the same definitions they check with.
#include <algorithm>

#include <gtest/gtest.h>

#include "app/cli.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::app {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Completion, FormatsAreTheOnesEachCommandAccepts) {
  EXPECT_EQ(complete({"list", "--format"}, "", false), (std::vector<std::string>{"csv", "json", "text"}));
  EXPECT_EQ(complete({"info", "--format"}, "", false), (std::vector<std::string>{"json", "text"}));
  EXPECT_TRUE(has(complete({"run", "transpose", "-f"}, "", false), "markdown"));
  // Every offered format is accepted by the command.
  for (const auto& f : complete({"list", "--format"}, "", false))
    EXPECT_EQ(test::run_cli({"list", "--format", f}).code, 0) << f;
  EXPECT_EQ(complete({"run", "transpose", "--replay-mode"}, "", false),
            (std::vector<std::string>{"kernel", "variant"}));
}

TEST(Completion, ThresholdsAndParametersByName) {
  const auto thresholds = complete({"diagnose", "--report", "r.json", "--threshold"}, "occ", false);
  EXPECT_EQ(thresholds, (std::vector<std::string>{"occupancy.achieved="}));
  EXPECT_EQ(complete({"run", "transpose", "--param"}, "", false),
            (std::vector<std::string>{"cols=", "rows="}));
  EXPECT_EQ(complete({"selftest", "--labs"}, "trans", false), (std::vector<std::string>{"transpose"}));
}

TEST(Completion, CompareMetricsAreMetricNamesNotSets) {
  const auto metrics = complete({"compare", "a.json", "b.json", "--metrics"}, "", false);
  EXPECT_FALSE(has(metrics, "basic"));
  EXPECT_TRUE(has(metrics, "shld_wavefronts_per_inst"));
}

TEST(Completion, FileAndNumberValuesOfferNothing) {
  EXPECT_TRUE(complete({"run", "transpose", "--json"}, "", false).empty());
  EXPECT_TRUE(complete({"run", "transpose", "--repeat"}, "", false).empty());
}

}  // namespace
}  // namespace gpulab::app
