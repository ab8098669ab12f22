// The occupancy lab on a real GPU: every variant correct at small odd sizes and at the default
// size; the theoretical occupancy the block-size and shared-memory limits give, block-32's
// achieved occupancy, the cost of starving DRAM of warps, and the tail of a grid one block past
// a full wave.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"

namespace gpulab {
namespace {

using test::derived;

namespace d = report::derived;

constexpr std::size_t kVariants = 9;
const char* const kStreamVariants[] = {"block-32",  "block-64",   "block-128",   "block-256",
                                       "block-512", "block-1024", "smem-limited"};
const char* const kTailVariants[] = {"one-extra-block", "balanced"};

const report::Variant& variant(const report::Report& r, const std::string& name) {
  const auto* v = r.find_variant(name);
  if (!v) throw std::runtime_error("no variant " + name);
  return *v;
}

const report::StaticAttributes& attributes(const report::Variant& v) {
  EXPECT_EQ(v.kernels.size(), 1u) << v.name;
  if (v.kernels.empty()) throw std::runtime_error(v.name + ": no kernel");
  return v.kernels.front().attributes;
}

// The tail pair works on (full wave + 1) x `block` threads x tail_items elements; both variants
// on the same ones.
std::uint64_t tail_elements(const report::Report& r) {
  const auto& a = attributes(variant(r, "one-extra-block"));
  return a.grid_blocks * static_cast<std::uint64_t>(a.block_threads) *
         static_cast<std::uint64_t>(r.params.at("tail_items"));
}

void expect_all_correct(const report::Report& r, const std::string& context) {
  ASSERT_EQ(r.variants.size(), kVariants) << context;
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.status, report::VariantStatus::ok)
        << context << " " << v.name << ": " << v.skip_reason;
    EXPECT_EQ(v.check.status, report::CheckStatus::passed)
        << context << " " << v.name << ": " << v.check.message;
    EXPECT_EQ(v.check.max_abs_error, 0.0) << context << " " << v.name;  // one fmaf each side
  }
  for (const char* name : kStreamVariants)
    EXPECT_EQ(variant(r, name).check.elements, static_cast<std::uint64_t>(r.params.at("size")))
        << context << " " << name;
  for (const char* name : kTailVariants)
    EXPECT_EQ(variant(r, name).check.elements, tail_elements(r)) << context << " " << name;
}

// Odd sizes leave a partial last block at every block size; 1 to 3 elements per thread and a
// short wait exercise the tail pair's grid-stride loop (balanced: some threads one more element).
TEST(OccupancyGpu, AllVariantsCorrectAtSmallOddSizes) {
  GPULAB_REQUIRE_GPU();
  for (int n : {1, 33, 1001, 4099}) {
    for (int items : {1, 3}) {
      app::RunSettings s;
      s.size = n;
      s.params = {{"tail_items", items}, {"tail_cycles", 1000}};
      s.repeat = 1;
      s.warmup = 0;
      s.metrics = "none";
      const auto r = test::run_lab("occupancy", s);
      expect_all_correct(r, "n=" + std::to_string(n) + " items=" + std::to_string(items));
    }
  }
}

// The `block` parameter sizes the blocks of smem-limited and of the tail pair (whose full wave it
// changes too), not the block-size variants'; every variant stays correct at each.
TEST(OccupancyGpu, TheBlockParameterSizesSmemLimitedAndTheTailPair) {
  GPULAB_REQUIRE_GPU();
  for (int block : {32, 96, 1024}) {
    const auto r = test::run_lab(
        "occupancy",
        test::check_only(4099, {{"block", block}, {"tail_items", 2}, {"tail_cycles", 1000}}));
    const std::string context = "block=" + std::to_string(block);
    expect_all_correct(r, context);
    EXPECT_EQ(attributes(variant(r, "smem-limited")).block_threads, block) << context;
    for (const char* name : kTailVariants)
      EXPECT_EQ(attributes(variant(r, name)).block_threads, block) << context << " " << name;
    EXPECT_EQ(attributes(variant(r, "block-256")).block_threads, 256) << context;
  }
}

// One run at the defaults (2^26 floats; 64 elements of 32768 cycles per tail thread) with the
// basic counters, shared by the tests below.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("occupancy", app::RunSettings{});
  return r;
}

TEST(OccupancyGpu, DefaultSizeCorrect) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  EXPECT_EQ(r.params.at("size"), 1 << 26);
  expect_all_correct(r, "default");
}

// The static side of the lesson, from the occupancy API through the report's attributes.
TEST(OccupancyGpu, TheoreticalOccupancyFromBlockAndSharedMemoryLimits) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const int max_warps = r.device.max_warps_per_sm;
  ASSERT_GT(max_warps, 0);

  // 32-thread blocks: the 32-blocks-per-SM limit, 32 one-warp blocks = half the warp slots.
  const auto& b32 = attributes(variant(r, "block-32"));
  EXPECT_EQ(b32.block_threads, 32);
  EXPECT_EQ(b32.max_active_blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(b32.theoretical_occupancy, 0.5);
  // From 64 threads up the light kernel fills every warp slot.
  for (const char* name : {"block-64", "block-128", "block-256", "block-512", "block-1024"})
    EXPECT_DOUBLE_EQ(attributes(variant(r, name)).theoretical_occupancy, 1.0) << name;

  // 100 KB of shared memory per 256-thread block: shared memory, not warps, decides how many
  // blocks fit (2 on the H200: 2 x (100 + 1) KB of 228 KB).
  const auto& smem = attributes(variant(r, "smem-limited"));
  EXPECT_EQ(smem.block_threads, 256);
  EXPECT_EQ(smem.dynamic_shared_bytes, 100u * 1024);
  int reserved = 0;
  ASSERT_EQ(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, r.device.index),
      cudaSuccess);
  const auto per_block =
      smem.dynamic_shared_bytes + smem.static_shared_bytes + static_cast<std::uint64_t>(reserved);
  const int by_shared = static_cast<int>(r.device.shared_per_sm_bytes / per_block);
  const int by_warps = max_warps / 8;
  EXPECT_EQ(smem.max_active_blocks_per_sm, std::min(by_shared, by_warps));
  EXPECT_GE(smem.max_active_blocks_per_sm, 1);
  EXPECT_LE(smem.max_active_blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(smem.theoretical_occupancy,
                   smem.max_active_blocks_per_sm * 8.0 / static_cast<double>(max_warps));

  // The tail pair: a full wave is SMs x blocks per SM; one-extra-block launches one more.
  const auto& extra = attributes(variant(r, "one-extra-block"));
  const auto& balanced = attributes(variant(r, "balanced"));
  const std::uint64_t wave =
      static_cast<std::uint64_t>(r.device.sm_count) * balanced.max_active_blocks_per_sm;
  EXPECT_EQ(balanced.grid_blocks, wave);
  EXPECT_EQ(extra.grid_blocks, wave + 1);
  EXPECT_DOUBLE_EQ(extra.theoretical_occupancy, 1.0);
}

TEST(OccupancyGpu, Block32AchievesAtMostHalfTheWarpSlots) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const double b32 = derived(variant(r, "block-32"), d::achieved_occupancy);
  EXPECT_LE(b32, 0.55);
  EXPECT_GT(b32, 0.0);
  // Achieved occupancy cannot exceed the theoretical 25% of the shared-memory-limited launch.
  EXPECT_LE(derived(variant(r, "smem-limited"), d::achieved_occupancy), 0.3);
  EXPECT_GT(derived(variant(r, "block-256"), d::achieved_occupancy), b32);
}

// Half the warps keep half the bytes in flight (4 KB per SM against ~19 KB that would saturate
// DRAM); a quarter of them a quarter. Measured by CUDA events: the margins are wide.
TEST(OccupancyGpu, FullOccupancyFasterThanBlock32AndSharedLimited) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto& b32 = variant(r, "block-32");
  const auto& b256 = variant(r, "block-256");
  const auto& smem = variant(r, "smem-limited");
  EXPECT_GE(b256.speedup, 1.3) << "block-256 " << b256.timing.median << " s, block-32 "
                               << b32.timing.median << " s";
  EXPECT_GE(smem.timing.median, 1.3 * b256.timing.median);
}

// Fixed-cost blocks: the lone block of the second wave takes as long as a whole wave, so
// one-extra-block takes ~2 waves (2 x 64 elements x 32768 cycles) and balanced ~1 (65 x 32768).
TEST(OccupancyGpu, OneBlockPastAFullWaveCostsASecondWave) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto& extra = variant(r, "one-extra-block");
  const auto& balanced = variant(r, "balanced");
  EXPECT_GE(extra.timing.median, 1.5 * balanced.timing.median)
      << "one-extra-block " << extra.timing.median << " s, balanced " << balanced.timing.median
      << " s";
  // Each element waits at least tail_cycles SM cycles, and the SM runs at most at its peak clock.
  ASSERT_GT(r.device.sm_clock_hz, 0);
  const double wave_s = static_cast<double>(r.params.at("tail_items")) *
                        static_cast<double>(r.params.at("tail_cycles")) / r.device.sm_clock_hz;
  EXPECT_GE(balanced.timing.median, wave_s);
  EXPECT_GE(extra.timing.median, 2 * wave_s);
  EXPECT_GE(wave_s, 1e-3) << "the defaults should make one wave last a millisecond or more";
}

}  // namespace
}  // namespace gpulab
