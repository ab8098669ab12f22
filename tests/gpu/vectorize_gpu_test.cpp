// The vectorize lab on a real GPU: every variant correct with and without a scalar tail and with
// misaligned buffers, float4 at the copy roof, and a quarter of the memory instructions.
#include <algorithm>

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
namespace m = report::metrics::name;

// Sizes with every remainder mod 4 (the scalar tail), and buffers offset by 0-3 floats (1-3 send
// the float4 kernels down their scalar fallback).
TEST(VectorizeGpu, AllVariantsCorrectWithTailsAndMisalignedBuffers) {
  GPULAB_REQUIRE_GPU();
  for (int n : {1, 3, 6, 1001, 4099, 65536}) {
    for (int misalign : {0, 1, 3}) {
      const auto r = test::run_lab("vectorize", test::check_only(n, {{"misalign", misalign}}));
      ASSERT_EQ(r.variants.size(), 3u);
      test::expect_exact(r, static_cast<std::uint64_t>(n),
                         "n=" + std::to_string(n) + " misalign=" + std::to_string(misalign));
    }
  }
}

// One run at the default size (2^28 floats) with the basic counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("vectorize", app::RunSettings{});
  return r;
}

TEST(VectorizeGpu, DefaultSizeCorrectAndFloat4AtTheCopyRoof) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_EQ(r.params.at("size"), 1 << 28);
  for (const auto& v : r.variants)
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
  double best = 0;
  for (const auto& v : r.variants) best = std::max(best, v.roof_fraction);
  EXPECT_GE(best, 0.90) << "best effective bandwidth vs the measured copy roof";
}

// 16 sectors per request is what a warp's 512-byte float4 access needs: proof the vector path
// ran. DRAM reads the input once whatever the access width.
TEST(VectorizeGpu, CountersShowVectorAccesses) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& scalar = *r.find_variant("scalar");
  EXPECT_NEAR(derived(scalar, d::gld_sectors_per_request), 4.0, 0.1);
  EXPECT_NEAR(derived(scalar, d::gst_sectors_per_request), 4.0, 0.1);
  for (const char* name : {"float4", "float4-grid-stride"}) {
    const auto& v = *r.find_variant(name);
    EXPECT_NEAR(derived(v, d::gld_sectors_per_request), 16.0, 0.5) << name;
    EXPECT_NEAR(derived(v, d::gst_sectors_per_request), 16.0, 0.5) << name;
  }
  for (const auto& v : r.variants) EXPECT_NEAR(derived(v, d::dram_read_over_model), 1.0, 0.05) << v.name;
}

// Warp-level global load and store instructions ("full" metric set): a quarter with float4.
// 2^24 + 3 elements: the three tail elements add one instruction, which does not show.
TEST(VectorizeGpu, Float4DividesMemoryInstructionsByFour) {
  GPULAB_REQUIRE_GPU();
  app::RunSettings s;
  s.size = (1 << 24) + 3;
  s.repeat = 2;
  s.metrics = "full";
  const auto r = test::run_lab("vectorize", s);
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& scalar = *r.find_variant("scalar");
  for (const char* name : {"float4", "float4-grid-stride"}) {
    const auto& v = *r.find_variant(name);
    EXPECT_NEAR(raw(scalar, m::gld_inst) / raw(v, m::gld_inst), 4.0, 0.2) << name;
    EXPECT_NEAR(raw(scalar, m::gst_inst) / raw(v, m::gst_inst), 4.0, 0.2) << name;
  }
}

// Buffers one float off their aligned start: the float4 kernels must take their scalar path.
// A warp's 32 consecutive floats then straddle 5 sectors, for every variant; a vector access
// would show ~16 (and would fault on the misaligned address).
TEST(VectorizeGpu, MisalignedBuffersFallBackToScalarAccesses) {
  GPULAB_REQUIRE_GPU();
  app::RunSettings s;
  s.size = 1 << 24;
  s.params = {{"misalign", 1}};
  s.repeat = 2;
  const auto r = test::run_lab("vectorize", s);
  for (const auto& v : r.variants)
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  for (const auto& v : r.variants) {
    const double sectors = derived(v, d::gld_sectors_per_request);
    EXPECT_GT(sectors, 4.5) << v.name;
    EXPECT_LT(sectors, 5.5) << v.name;
  }
}

}  // namespace
}  // namespace gpulab
