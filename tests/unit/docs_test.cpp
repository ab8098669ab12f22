// docs/metrics.md stays true to the catalogue: every metric and derived metric is documented.
#include <gtest/gtest.h>

#include "reports/derived.hpp"
#include "reports/input_file.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab {
namespace {

TEST(Docs, MetricsPageCoversTheCatalogue) {
  const std::string page = read_file(std::string(GPULAB_DOCS_DIR) + "/metrics.md");
  const std::string stall_prefix = "smsp__average_warps_issue_stalled_";
  for (const auto& m : report::metrics::catalogue()) {
    EXPECT_NE(page.find(std::string("`") + m.short_name + "`"), std::string::npos) << m.short_name;
    // Stall reasons are documented by their reason; their full names follow one pattern.
    const std::string name = m.name;
    if (name.rfind(stall_prefix, 0) == 0) {
      const std::string reason = name.substr(stall_prefix.size(),
                                             name.find("_per_issue_active") - stall_prefix.size());
      EXPECT_EQ(std::string(m.short_name), "stall_" + reason) << name;
    } else {
      EXPECT_NE(page.find("`" + name + "`"), std::string::npos) << name;
    }
  }
  for (const auto& d : report::derived_catalogue())
    EXPECT_NE(page.find(std::string("`") + d.name + "`"), std::string::npos) << d.name;
}

}  // namespace
}  // namespace gpulab
