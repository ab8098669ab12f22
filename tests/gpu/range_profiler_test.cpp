// The range profiler's kernel replay on its own: one batch holds every launch made inside it,
// in launch order, and costs less per launch than a batch for each (what `gpulab profile` pays
// per profiled launch of a program); and what the same batch costs under user replay.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include <cuda_runtime_api.h>

#include "cupti/range_profiler.hpp"
#include "gpu/gpu_session.hpp"
#include "gpu/tiny_kernel.cuh"
#include "reports/metric_catalogue.hpp"

namespace gpulab {
namespace {

namespace m = report::metrics::name;

constexpr int kElements = 1 << 16;  // 256 blocks of 256 threads

struct DeviceInts {
  int* d = nullptr;
  DeviceInts() {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), kElements * sizeof(int)), cudaSuccess);
  }
  ~DeviceInts() { cudaFree(d); }
};

cupti::RangeProfiler* basic_profiler() {
  std::string why_not;
  auto* p = test::gpu_session().profiler(report::metrics::metric_set("basic"), why_not);
  if (!p) ADD_FAILURE() << why_not;
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(RangeProfilerGpu, OneBatchHoldsEveryLaunchInLaunchOrder) {
  GPULAB_REQUIRE_GPU();
  auto* profiler = basic_profiler();
  ASSERT_NE(profiler, nullptr);
  DeviceInts buffer;
  // Launch k covers 2^(10+k) elements: its warp instructions grow with k, so the order shows.
  const int sizes[] = {1 << 10, 1 << 12, 1 << 14, 1 << 16};
  const auto ranges = profiler->profile_kernels(
      [&] {
        for (int n : sizes) ASSERT_EQ(test::launch_increment(buffer.d, n), 0);
      },
      4);
  ASSERT_EQ(ranges.size(), 4u);
  for (std::size_t k = 1; k < ranges.size(); ++k)
    EXPECT_NEAR(ranges[k].values.at(m::inst_executed) / ranges[k - 1].values.at(m::inst_executed),
                4.0, 0.2)
        << "launch " << k;
}

TEST(RangeProfilerGpu, ABatchOfLaunchesCostsLessPerLaunchThanABatchEach) {
  GPULAB_REQUIRE_GPU();
  auto* profiler = basic_profiler();
  ASSERT_NE(profiler, nullptr);
  DeviceInts buffer;
  constexpr int kLaunches = 50;
  profiler->profile_kernels([&] { test::launch_increment(buffer.d, kElements); }, 1);  // warm

  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kLaunches; ++i)
    ASSERT_EQ(
        profiler->profile_kernels([&] { test::launch_increment(buffer.d, kElements); }, 1).size(),
        1u);
  const double each = seconds_since(t0) / kLaunches;

  t0 = std::chrono::steady_clock::now();
  const auto ranges = profiler->profile_kernels(
      [&] {
        for (int i = 0; i < kLaunches; ++i) test::launch_increment(buffer.d, kElements);
      },
      kLaunches);
  const double batched = seconds_since(t0) / kLaunches;
  ASSERT_EQ(ranges.size(), static_cast<std::size_t>(kLaunches));

  std::printf(
      "kernel replay of %d launches, %d passes: %.1f ms per launch in a batch each, "
      "%.1f ms in one batch\n",
      kLaunches, profiler->passes(), each * 1e3, batched * 1e3);
  RecordProperty("ms_per_launch_batch_each", std::to_string(each * 1e3));
  RecordProperty("ms_per_launch_one_batch", std::to_string(batched * 1e3));
  EXPECT_LT(batched, each / 2);
}

// The same launches under user replay, where the caller runs the whole batch once per pass:
// CUPTI then programs the counters and reads them once per pass, not once per launch and pass,
// and restores no memory. This is what replaying a whole program once per pass would cost per
// launch, beside kernel replay's per-launch passes.
TEST(RangeProfilerGpu, UserReplayOfABatchCostsLessPerLaunchThanKernelReplay) {
  GPULAB_REQUIRE_GPU();
  auto* profiler = basic_profiler();
  ASSERT_NE(profiler, nullptr);
  DeviceInts buffer;
  constexpr int kLaunches = 50;
  const auto launches = [&] {
    for (int i = 0; i < kLaunches; ++i) test::launch_increment(buffer.d, kElements);
  };
  profiler->profile_kernels(launches, kLaunches);  // warm

  auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(profiler->profile_kernels(launches, kLaunches).size(),
            static_cast<std::size_t>(kLaunches));
  const double kernel_replay = seconds_since(t0) / kLaunches;

  t0 = std::chrono::steady_clock::now();
  const auto ranges = profiler->replay_kernels(
      [&] {
        launches();
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      },
      kLaunches, {});
  const double user_replay = seconds_since(t0) / kLaunches;
  ASSERT_EQ(ranges.size(), static_cast<std::size_t>(kLaunches));
  for (const auto& r : ranges)  // every launch read whole in every pass: the same count
    EXPECT_EQ(r.values.at(m::inst_executed), ranges.front().values.at(m::inst_executed))
        << "range " << r.range_name;

  std::printf(
      "%d launches, %d passes: %.2f ms per launch under kernel replay, %.2f ms under user "
      "replay (%.3fx)\n",
      kLaunches, profiler->passes(), kernel_replay * 1e3, user_replay * 1e3,
      user_replay / kernel_replay);
  RecordProperty("ms_per_launch_kernel_replay", std::to_string(kernel_replay * 1e3));
  RecordProperty("ms_per_launch_user_replay", std::to_string(user_replay * 1e3));
  EXPECT_LT(user_replay, kernel_replay);
}

}  // namespace
}  // namespace gpulab
