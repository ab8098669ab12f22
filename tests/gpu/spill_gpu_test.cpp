// The spill lab on a real GPU (small odd sizes: tests/gpu/lab_registry_test.cpp): every variant
// correct at the default size, the static attributes that tell a stack frame and a register cap
// apart, and the local-memory traffic the counters show for the array indexed at run time and for
// the capped kernel only.
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

// One run at the default size (2^22 threads) with the basic counters. The capped kernel takes
// milliseconds, so fewer repetitions than the streaming labs.
const report::Report& default_run() {
  static const report::Report r = [] {
    app::RunSettings s;
    s.repeat = 10;
    return test::run_lab("spill", s);
  }();
  return r;
}

const report::StaticAttributes& attributes(const report::Variant& v) {
  EXPECT_EQ(v.kernels.size(), 1u) << v.name;
  return v.kernels.at(0).attributes;
}

TEST(SpillGpu, DefaultSizeCorrectAndRegistersFaster) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 4u);
  EXPECT_EQ(r.params.at("size"), 1 << 22);
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
    EXPECT_EQ(v.check.max_abs_error, 0.0) << v.name;
  }
  // ~4.7 KB of local traffic per thread against 132 B of DRAM traffic: several times slower.
  EXPECT_GE(r.find_variant("registers")->speedup, 2.0);
  // 116 local instructions per 64 FFMAs in every round against none. The capped kernel is the
  // second experiment's baseline: the uncapped one's speedup is measured against it.
  EXPECT_GE(r.find_variant("capped")->timing.median,
            3.0 * r.find_variant("uncapped")->timing.median);
  EXPECT_DOUBLE_EQ(r.find_variant("capped")->speedup, 1.0);
  EXPECT_GE(r.find_variant("uncapped")->speedup, 3.0);
}

// What the harness reads from cudaFuncGetAttributes, no counters needed: the run-time-indexed
// array has its 32 floats in a stack frame, the unrolled one none; the cap holds the capped
// kernel to 32 registers, which costs it a stack frame for its spills and buys it occupancy.
TEST(SpillGpu, StaticAttributesShowStackFrameAndRegisterCap) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto& local_array = attributes(*r.find_variant("local-array"));
  const auto& registers = attributes(*r.find_variant("registers"));
  const auto& capped = attributes(*r.find_variant("capped"));
  const auto& uncapped = attributes(*r.find_variant("uncapped"));

  EXPECT_GE(local_array.local_bytes_per_thread, 32u * sizeof(float));
  EXPECT_EQ(registers.local_bytes_per_thread, 0u);

  EXPECT_LE(capped.registers_per_thread, 32);
  EXPECT_GT(capped.local_bytes_per_thread, 0u);
  EXPECT_GE(uncapped.registers_per_thread, 64) << "64 live values need 64 registers";
  EXPECT_EQ(uncapped.local_bytes_per_thread, 0u);
  EXPECT_GT(capped.theoretical_occupancy, uncapped.theoretical_occupancy);
}

// local_bytes / (32 x global sectors) is what the diagnosis node `local` holds against 0.05.
double local_over_global(const report::Variant& v) {
  const double global = 32.0 * (raw(v, m::gld_sectors) + raw(v, m::gst_sectors));
  return global > 0 ? derived(v, d::local_bytes) / global : -1;
}

TEST(SpillGpu, CountersShowLocalTrafficOnlyWhereValuesLeaveRegisters) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto& local_array = *r.find_variant("local-array");
  const auto& capped = *r.find_variant("capped");

  // Expected ~35x for the array and ~370x for the capped kernel; the diagnosis needs 0.05.
  EXPECT_GE(local_over_global(local_array), 0.5);
  EXPECT_GE(local_over_global(capped), 0.5);
  // Each of the 16 x 31 smoothing steps stores its 4-byte result to the stack frame.
  const double threads = static_cast<double>(r.params.at("size"));
  EXPECT_GE(raw(local_array, m::local_st_bytes), 0.9 * threads * 16 * 31 * 4);
  EXPECT_GT(raw(capped, m::local_ld_bytes), 0.0);

  for (const char* name : {"registers", "uncapped"}) {
    const auto& v = *r.find_variant(name);
    EXPECT_EQ(derived(v, d::local_bytes), 0.0) << name;
  }
  // Global traffic is coalesced in every variant: 4 sectors per request.
  for (const auto& v : r.variants)
    EXPECT_NEAR(derived(v, d::gld_sectors_per_request), 4.0, 0.1) << v.name;
}

}  // namespace
}  // namespace gpulab
