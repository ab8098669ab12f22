// The cuda-graphs lab on a real GPU: both variants correct at small odd sizes, and at the
// default size the signature of launch overhead: the graph runs the same kernels in less time,
// with less idle time between them.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "reports/report.hpp"

namespace gpulab {
namespace {

// Sizes that are not a multiple of the 256-thread block; 3 steps (the first reads x, the others
// update y in place) and a single step.
TEST(CudaGraphsGpu, AllVariantsCorrectAtSmallOddSizes) {
  GPULAB_REQUIRE_GPU();
  for (int n : {1, 1001}) {
    const auto r = test::run_lab("cuda-graphs", test::check_only(n, {{"steps", 3}}));
    ASSERT_EQ(r.variants.size(), 2u);
    test::expect_exact(r, static_cast<std::uint64_t>(n), fmt::format("n={}, 3 steps", n));
  }
  const auto r = test::run_lab("cuda-graphs", test::check_only(257, {{"steps", 1}}));
  ASSERT_EQ(r.variants.size(), 2u);
  test::expect_exact(r, 257u, "n=257, 1 step");
}

// One run at the default size (32768 floats, 200 steps) with the lab's launch counts and no
// counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("cuda-graphs", app::RunSettings{});
  return r;
}

TEST(CudaGraphsGpu, DefaultSizeCorrectAndEveryStepTraced) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  EXPECT_EQ(r.params.at("size"), 32768);
  EXPECT_EQ(r.params.at("steps"), 200);
  ASSERT_EQ(r.variants.size(), 2u);
  test::expect_exact(r, 32768u, "default");
  for (const auto& v : r.variants) {
    ASSERT_TRUE(v.timeline.has_value()) << v.name;
    EXPECT_EQ(v.timeline->summary.kernels, 200) << v.name;
  }
}

// Kernels of ~1 us, launches of a few us each: the graph takes about a third of the time of the
// launches one by one on the H200 (docs/cards.md); at most 80% asserted.
TEST(CudaGraphsGpu, GraphIsFaster) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* launches = r.find_variant("stream-launches");
  const auto* graph = r.find_variant("graph");
  ASSERT_NE(launches, nullptr);
  ASSERT_NE(graph, nullptr);
  ASSERT_GT(launches->timing.median, 0.0);
  RecordProperty("stream_launches_us", fmt::format("{:.1f}", launches->timing.median * 1e6));
  RecordProperty("graph_us", fmt::format("{:.1f}", graph->timing.median * 1e6));
  EXPECT_LE(graph->timing.median, 0.8 * launches->timing.median);
}

// The time the graph saves is idle time between kernels: its trace has a smaller idle share.
TEST(CudaGraphsGpu, GraphLeavesLessIdleTime) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* launches = r.find_variant("stream-launches");
  const auto* graph = r.find_variant("graph");
  ASSERT_NE(launches, nullptr);
  ASSERT_NE(graph, nullptr);
  ASSERT_TRUE(launches->timeline.has_value());
  ASSERT_TRUE(graph->timeline.has_value());
  const double launches_idle = launches->timeline->summary.idle_fraction;
  const double graph_idle = graph->timeline->summary.idle_fraction;
  RecordProperty("stream_launches_idle", fmt::format("{:.3f}", launches_idle));
  RecordProperty("graph_idle", fmt::format("{:.3f}", graph_idle));
  EXPECT_LT(graph_idle, launches_idle);
}

}  // namespace
}  // namespace gpulab
