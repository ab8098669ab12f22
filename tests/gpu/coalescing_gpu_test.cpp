// The coalescing lab on a real GPU: every variant correct at small and default sizes, and the
// sectors-per-request and DRAM signature of strided, shifted and contiguous reads.
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

TEST(CoalescingGpu, AllVariantsCorrectAtSmallSizesAndStrides) {
  GPULAB_REQUIRE_GPU();
  for (int n : {1, 1000, 1025, 4099}) {
    for (int stride : {1, 7, 32}) {
      const auto r = test::run_lab("coalescing", test::check_only(n, {{"stride", stride}}));
      ASSERT_EQ(r.variants.size(), 3u);
      test::expect_exact(r, static_cast<std::uint64_t>(n),
                         "n=" + std::to_string(n) + " stride=" + std::to_string(stride));
    }
  }
}

// One run at the default size (2^26 elements, stride 8) with the basic counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("coalescing", app::RunSettings{});
  return r;
}

TEST(CoalescingGpu, DefaultSizeCorrectAndCoalescedReadsFaster) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_EQ(r.params.at("size"), 1 << 26);
  EXPECT_EQ(r.params.at("stride"), 8);
  for (const auto& v : r.variants)
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
  // The strided copy moves 4.5x the DRAM bytes (8x the reads: a whole sector per float).
  EXPECT_GE(r.find_variant("contiguous")->speedup, 3.0);
  // The shifted read moves the same DRAM bytes as the contiguous one: no big difference.
  EXPECT_LE(r.find_variant("offset")->timing.median,
            1.5 * r.find_variant("contiguous")->timing.median);
}

TEST(CoalescingGpu, CountersShowSectorsPerRequestAndWastedDramReads) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& strided = *r.find_variant("strided");
  const auto& offset = *r.find_variant("offset");
  const auto& contiguous = *r.find_variant("contiguous");

  EXPECT_NEAR(derived(strided, d::gld_sectors_per_request), 32.0, 0.5);
  const double offset_sectors = derived(offset, d::gld_sectors_per_request);
  EXPECT_GT(offset_sectors, 4.5);
  EXPECT_LT(offset_sectors, 5.5);
  EXPECT_NEAR(derived(contiguous, d::gld_sectors_per_request), 4.0, 0.1);
  for (const auto* v : {&strided, &offset, &contiguous})
    EXPECT_NEAR(derived(*v, d::gst_sectors_per_request), 4.0, 0.1) << v->name;

  // A whole 32-byte sector per useful 4-byte float: 8x the model, and never less.
  EXPECT_GE(derived(strided, d::dram_read_over_model), 7.5);
  EXPECT_NEAR(derived(offset, d::dram_read_over_model), 1.0, 0.05);
  EXPECT_NEAR(derived(contiguous, d::dram_read_over_model), 1.0, 0.05);
}

}  // namespace
}  // namespace gpulab
