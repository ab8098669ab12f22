// docs/metrics.md stays true to the catalogue: every metric and derived metric is documented.
#include <gtest/gtest.h>

#include "cupti/metric_catalogue.hpp"
#include "reports/atomic_file.hpp"
#include "reports/derived.hpp"

namespace gpulab {
namespace {

TEST(Docs, MetricsPageCoversTheCatalogue) {
  const std::string page = read_file(std::string(GPULAB_DOCS_DIR) + "/metrics.md");
  for (const auto& m : metrics::catalogue()) {
    EXPECT_NE(page.find(std::string("`") + m.name + "`"), std::string::npos) << m.name;
    EXPECT_NE(page.find(std::string("`") + m.short_name + "`"), std::string::npos) << m.short_name;
  }
  for (const auto& d : report::derived_catalogue())
    EXPECT_NE(page.find(std::string("`") + d.name + "`"), std::string::npos) << d.name;
}

}  // namespace
}  // namespace gpulab
