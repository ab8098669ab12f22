// The reduction lab on a real GPU: every variant correct at odd sizes and at the default size,
// the bank-conflict signature of the interleaved tree, and the warp-shuffle kernel against CUB
// and the copy roof.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "labs/harness/registry.hpp"
#include "reports/derived.hpp"

namespace gpulab {
namespace {

namespace d = report::derived;
namespace m = report::metrics::name;

report::Report run_reduction(app::RunSettings settings) {
  return app::run_lab(test::gpu_session(), labs::lab_or_throw("reduction"), settings,
                      {"reduction_gpu_test"});
}

const report::Variant& variant(const report::Report& r, const char* name) {
  const auto* v = r.find_variant(name);
  if (!v) throw std::runtime_error(std::string("no variant ") + name);
  return *v;
}

// The kernel of a variant by name (the tree kernels come first, the finishing kernel second).
const report::Kernel* kernel(const report::Variant& v, const std::string& name) {
  for (const auto& k : v.kernels)
    if (k.name == name) return &k;
  ADD_FAILURE() << v.name << ": no kernel named " << name;
  return nullptr;
}

double value(const report::Kernel* k, const std::map<std::string, double> report::Kernel::*field,
             const char* name) {
  if (!k) return -1;
  const auto& values = k->*field;
  auto it = values.find(name);
  EXPECT_NE(it, values.end()) << k->name << ": " << name << " not measured";
  return it == values.end() ? -1 : it->second;
}
double raw(const report::Kernel* k, const char* name) {
  return value(k, &report::Kernel::metrics, name);
}
double derived(const report::Kernel* k, const char* name) {
  return value(k, &report::Kernel::derived, name);
}

void measured(const std::string& key, double v) {
  ::testing::Test::RecordProperty(key, std::to_string(v));
  std::cout << "[ measured ] reduction " << key << " = " << v << "\n";
}

TEST(ReductionGpu, AllVariantsCorrectAtSmallAndOddSizes) {
  GPULAB_REQUIRE_GPU();
  // 1 and 3: only the n % 4 tail of the float4 kernel; 4096 and 4097: either side of CUB's
  // single-tile limit; 1000003 = 3906 * 256 + 67: a partial last block everywhere.
  for (std::int64_t n : {1, 3, 4096, 4097, 12345, 1000003}) {
    app::RunSettings s;
    s.size = n;
    s.repeat = 2;
    s.warmup = 1;
    s.metrics = "none";
    const auto r = run_reduction(s);
    ASSERT_EQ(r.variants.size(), 5u);
    for (const auto& v : r.variants) {
      EXPECT_EQ(v.check.status, report::CheckStatus::passed)
          << "n=" << n << " " << v.name << ": " << v.check.message;
      EXPECT_EQ(v.check.elements, 1u);
      EXPECT_GT(v.check.tolerance_abs, 0.0);
    }
  }
}

// A tolerance that would hide a lost element at a small size would make the test above
// meaningless: at 12345 inputs one float epsilon of sum |x| is ~7e-4, far below any |x_i| but
// the smallest.
TEST(ReductionGpu, ToleranceIsTightAtSmallSizes) {
  GPULAB_REQUIRE_GPU();
  app::RunSettings s;
  s.size = 12345;
  s.variants = "sequential";
  s.repeat = 1;
  s.warmup = 0;
  s.metrics = "none";
  const auto r = run_reduction(s);
  EXPECT_LT(r.variants.at(0).check.tolerance_abs, 2e-3);
}

// One run at the default size (2^26 floats) with the basic counters, shared by the tests below.
const report::Report& default_run() {
  static const report::Report r = run_reduction(app::RunSettings{});
  return r;
}

TEST(ReductionGpu, DefaultSizeCorrect) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  ASSERT_EQ(r.variants.size(), 5u);
  EXPECT_EQ(r.params.at("n"), std::int64_t{1} << 26);
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.check.status, report::CheckStatus::passed) << v.name << ": " << v.check.message;
    measured(v.name + ".abs_error", v.check.max_abs_error);
  }
}

// The target is warp-shuffle within 10% of CUB and at >= 85% of the copy roof; the
// assertions leave room for run-to-run noise and report the measured numbers.
TEST(ReductionGpu, WarpShuffleRunsLikeCubNearTheRoof) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto& shuffle = variant(r, "warp-shuffle");
  const auto& cub = variant(r, "cub");
  ASSERT_GT(cub.timing.median, 0.0);
  const double over_cub = shuffle.timing.median / cub.timing.median;
  measured("warp_shuffle_time_over_cub", over_cub);
  measured("warp_shuffle_roof_fraction", shuffle.roof_fraction);
  measured("cub_roof_fraction", cub.roof_fraction);
  for (const auto& v : r.variants) measured(v.name + ".median_us", v.timing.median * 1e6);
  EXPECT_LE(over_cub, 1.25) << "warp-shuffle median vs CUB's";
  EXPECT_GE(shuffle.roof_fraction, 0.7) << "read bytes / time over the measured copy roof";
  // The trees read one float per thread and stop at 8 barriers per 256 inputs: well behind a
  // read stream (expected ~3x or more; asserted loosely).
  EXPECT_GE(shuffle.speedup, 1.5) << "warp-shuffle vs the interleaved tree";
}

TEST(ReductionGpu, CountersShowBankConflictsOnlyInInterleavedTree) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const auto* interleaved = kernel(variant(r, "interleaved"), "reduce_interleaved");
  const auto* padded = kernel(variant(r, "interleaved-padded"), "reduce_interleaved_padded");
  const auto* sequential = kernel(variant(r, "sequential"), "reduce_sequential");
  const double conflicted = derived(interleaved, d::shared_excess_wavefronts);
  measured("interleaved.shld_wavefronts_per_inst",
           derived(interleaved, d::shld_wavefronts_per_inst));
  measured("interleaved-padded.shld_wavefronts_per_inst",
           derived(padded, d::shld_wavefronts_per_inst));
  measured("sequential.shld_wavefronts_per_inst", derived(sequential, d::shld_wavefronts_per_inst));
  measured("interleaved.shared_excess_wavefronts", conflicted);
  // ~87 wavefronts for ~21 loads per block (~4.1); conflict-free trees ~1.0.
  EXPECT_GE(derived(interleaved, d::shld_wavefronts_per_inst), 2.5);
  EXPECT_LE(derived(padded, d::shld_wavefronts_per_inst), 1.2);
  EXPECT_LE(derived(sequential, d::shld_wavefronts_per_inst), 1.2);
  // ~100 excess wavefronts per block of 256 inputs, 2^18 blocks.
  EXPECT_GE(conflicted, 50.0 * (1 << 18));
  EXPECT_LT(derived(padded, d::shared_excess_wavefronts), 0.10 * conflicted);
  EXPECT_LT(derived(sequential, d::shared_excess_wavefronts), 0.10 * conflicted);
}

TEST(ReductionGpu, CountersShowEveryKernelAndOneReadOfTheInput) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  // Every variant launched exactly the kernels it declared, CUB's two included (a mismatch
  // leaves a "declared N kernel(s) but launched M" warning).
  for (const auto& w : r.warnings) EXPECT_EQ(w.find("declared"), std::string::npos) << w;
  ASSERT_EQ(variant(r, "cub").kernels.size(), 2u);
  EXPECT_EQ(variant(r, "cub").kernels[0].name, "cub::DeviceReduceKernel");
  // 268 MB of input, much more than the 60 MB L2: the reading kernel takes it from DRAM once.
  const double model = 4.0 * (1 << 26);
  const double shuffle_read =
      raw(kernel(variant(r, "warp-shuffle"), "reduce_warp_shuffle"), m::dram_read);
  const double cub_read = raw(&variant(r, "cub").kernels[0], m::dram_read);
  measured("warp-shuffle.dram_read_over_model", shuffle_read / model);
  measured("cub.dram_read_over_model", cub_read / model);
  EXPECT_NEAR(shuffle_read / model, 1.0, 0.1);
  EXPECT_NEAR(cub_read / model, 1.0, 0.1);
  // A warp's float4 load covers 512 contiguous bytes: 16 sectors per request.
  EXPECT_NEAR(derived(kernel(variant(r, "warp-shuffle"), "reduce_warp_shuffle"),
                      d::gld_sectors_per_request),
              16.0, 0.5);
}

// Kernels are named by their function: the labs' through the runtime, CUB's through the launch
// recorder (CUPTI callbacks), with the mangled name ncu prints under --print-kernel-base mangled.
TEST(ReductionGpu, KernelsCarryTheirFunctionNames) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* interleaved = kernel(variant(r, "interleaved"), "reduce_interleaved");
  ASSERT_NE(interleaved, nullptr);
  EXPECT_NE(interleaved->function.find("reduce_interleaved<"), std::string::npos)
      << interleaved->function;
  EXPECT_NE(interleaved->function.find("PlainSlots>"), std::string::npos) << interleaved->function;
  EXPECT_EQ(interleaved->mangled_name.rfind("_Z", 0), 0u) << interleaved->mangled_name;
  const auto& cub = variant(r, "cub");
  ASSERT_EQ(cub.kernels.size(), 2u);
  EXPECT_NE(cub.kernels[0].function.find("DeviceReduceKernel<"), std::string::npos)
      << cub.kernels[0].function;
  EXPECT_NE(cub.kernels[1].function.find("DeviceReduceSingleTileKernel<"), std::string::npos)
      << cub.kernels[1].function;
  EXPECT_FALSE(cub.kernels[0].mangled_name.empty());
}

// The warp-shuffle kernel reads 268 MB and writes one float. Under CUPTI's kernel replay it
// showed ~28 MB of DRAM writes (the memory restore's dirty lines written back), and with a
// flush before the session starts ~26 MB (the start's); ncu shows 2.4 MB. With the flush as the
// first kernel of each pass, what is left is L2's own write-back noise.
TEST(ReductionGpu, DramWritesOfAKernelThatWritesNothingAreNoise) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  if (!r.device.counters_available) GTEST_SKIP() << r.device.counters_unavailable_reason;
  const double written = raw(kernel(variant(r, "warp-shuffle"), "reduce_warp_shuffle"), m::dram_write);
  measured("warp-shuffle.dram_write_bytes", written);
  EXPECT_LT(written, 8e6);
}

}  // namespace
}  // namespace gpulab
