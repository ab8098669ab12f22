// The aos-soa lab on a real GPU: every variant correct, and the DRAM and sector signature of
// reading one field from an array of structs, from a struct of arrays, and every field.
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

// One run at the default size (2^26 particles) with the basic counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("aos-soa", app::RunSettings{});
  return r;
}

TEST(AosSoaGpu, DefaultSizeCorrectAndSoaFaster) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_EQ(r.params.at("particles"), 1 << 26);
  for (const auto& v : r.variants)
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
  // aos moves 16 + 4 bytes per particle through DRAM, soa 4 + 4: 2.5x.
  EXPECT_GE(r.find_variant("soa")->speedup, 2.0);
}

TEST(AosSoaGpu, CountersShowAosReadsEveryFieldFromDram) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& aos = *r.find_variant("aos");
  const auto& soa = *r.find_variant("soa");
  const auto& all = *r.find_variant("aos-all-fields");

  // One 4-byte field every 16 bytes: a warp's load spans 512 bytes, 16 sectors.
  EXPECT_NEAR(derived(aos, d::gld_sectors_per_request), 16.0, 0.5);
  EXPECT_NEAR(derived(soa, d::gld_sectors_per_request), 4.0, 0.1);
  // A 16-byte load per lane also spans 16 sectors, all of them used.
  EXPECT_NEAR(derived(all, d::gld_sectors_per_request), 16.0, 0.5);

  // aos drags the three unused fields through DRAM: 4x the bytes of soa (within 15%).
  const double aos_read = raw(aos, m::dram_read), soa_read = raw(soa, m::dram_read);
  EXPECT_NEAR(aos_read / soa_read, 4.0, 0.6);
  EXPECT_NEAR(derived(soa, d::dram_read_over_model), 1.0, 0.05);
  // Using every field reads what aos reads (the whole array), and all of it is needed: its own
  // work model (4 floats read per particle) is met exactly.
  EXPECT_NEAR(raw(all, m::dram_read) / aos_read, 1.0, 0.15);
  EXPECT_NEAR(derived(all, d::dram_read_over_model), 1.0, 0.05);
}

}  // namespace
}  // namespace gpulab
