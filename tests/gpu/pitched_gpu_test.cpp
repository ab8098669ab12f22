// The pitched lab on a real GPU: both layouts correct at odd shapes and the default size, and
// the extra sector per warp that packed, misaligned rows cost.
#include <utility>

#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"

namespace gpulab {
namespace {

using test::derived;
using test::raw;

namespace d = report::derived;

TEST(PitchedGpu, BothLayoutsCorrectAtOddShapes) {
  GPULAB_REQUIRE_GPU();
  const std::pair<int, int> shapes[] = {{1001, 777}, {1, 1}, {1, 9}, {33, 9}, {4096, 3}, {127, 65}};
  for (const auto& [width, height] : shapes) {
    app::RunSettings s;
    s.size = height;
    s.params = {{"width", width}};
    s.repeat = 1;
    s.warmup = 0;
    s.metrics = "none";
    const auto r = test::run_lab("pitched", s);
    ASSERT_EQ(r.variants.size(), 2u);
    for (const auto& v : r.variants) {
      EXPECT_EQ(v.check.status, report::CheckStatus::passed)
          << width << "x" << height << " " << v.name << ": " << v.check.message;
      EXPECT_EQ(v.check.elements, static_cast<std::uint64_t>(width) * height);
      EXPECT_EQ(v.check.max_abs_error, 0.0) << v.name;
    }
  }
}

// One run at the default size (32768 rows of 1001 floats) with the basic counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("pitched", app::RunSettings{});
  return r;
}

TEST(PitchedGpu, DefaultSizeCorrect) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.params.at("width"), 1001);
  EXPECT_EQ(r.params.at("height"), 32768);
  for (const auto& v : r.variants)
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
}

// Per row of 1001 floats, 32 requests: pitched rows take 126 sectors (3.94 per request), packed
// rows that start mid-sector 157, 7 rows in 8 of them (4.79 on average). Loads and stores alike.
TEST(PitchedGpu, CountersShowPackedRowsCostAnExtraSector) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& packed = *r.find_variant("unpitched");
  const auto& pitched = *r.find_variant("pitched");
  for (const char* metric : {d::gld_sectors_per_request, d::gst_sectors_per_request}) {
    const double p = derived(pitched, metric), u = derived(packed, metric);
    EXPECT_LE(p, 4.05) << metric;
    EXPECT_GE(u, 4.5) << metric;
    EXPECT_GE(u - p, 0.3) << metric;
  }
  // DRAM reads each useful byte about once either way: the effect stays in L1 and L2.
  for (const auto* v : {&packed, &pitched}) {
    EXPECT_GT(derived(*v, d::dram_read_over_model), 0.95) << v->name;
    EXPECT_LT(derived(*v, d::dram_read_over_model), 1.1) << v->name;
  }
}

}  // namespace
}  // namespace gpulab
