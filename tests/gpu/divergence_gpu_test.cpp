// The divergence lab on a real GPU (small odd sizes: tests/gpu/lab_registry_test.cpp): every
// variant correct at the default size, and the signature of a branch that splits warps: fewer
// threads per instruction, and both paths' instructions issued, which only grouping the data by the
// branch removes.
#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "labs/harness/registry.hpp"
#include "reports/metric_catalogue.hpp"

namespace gpulab {
namespace {

using test::raw;

namespace m = report::metrics::name;

// One run at the default size (2^25 elements) with the basic counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("divergence", app::RunSettings{});
  return r;
}

TEST(DivergenceGpu, DefaultSizeCorrectAndSortedFaster) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_EQ(r.params.at("size"), 1 << 25);
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
    EXPECT_EQ(v.check.max_abs_error, 0.0) << v.name;
  }
  // Each warp of the partitioned input issues one path instead of two: ~1.9x fewer
  // instructions, and the kernel is issue-bound.
  EXPECT_GE(r.find_variant("sorted")->speedup, 1.5);
}

TEST(DivergenceGpu, CountersShowLanesIdleOnlyInTheBranchOnRandomSigns) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& divergent = *r.find_variant("divergent");
  const auto& branchless = *r.find_variant("branchless");
  const auto& sorted = *r.find_variant("sorted");

  // ~17 expected: ~20 instructions at 32 lanes, then two ~128-instruction paths at ~16 lanes.
  // The diagnosis flags divergence below 24.
  EXPECT_LE(raw(divergent, m::threads_per_inst), 20.0);
  EXPECT_GE(raw(branchless, m::threads_per_inst), 30.0);
  EXPECT_GE(raw(sorted, m::threads_per_inst), 30.0);

  // Warp instructions: the select issues both paths like the divergent branch (~276 per warp);
  // on partitioned data each warp issues one path (~148).
  const double divergent_inst = raw(divergent, m::inst_executed);
  EXPECT_GE(raw(branchless, m::inst_executed), 0.85 * divergent_inst);
  EXPECT_LE(raw(sorted, m::inst_executed), 0.65 * divergent_inst);
}

}  // namespace
}  // namespace gpulab
