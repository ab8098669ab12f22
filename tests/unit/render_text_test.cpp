// Text rendering of synthetic reports (inputs chosen for the layout, not measurements).
#include <gtest/gtest.h>

#include "reports/render/render_text.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

Variant timed(const std::string& name, Role role, double median) {
  Variant v;
  v.name = name;
  v.role = role;
  v.check.status = CheckStatus::passed;
  v.timing.repeat = 3;
  v.timing.median = v.timing.min = v.timing.max = median;
  return v;
}

Report matmul_like() {
  Report r;
  r.lab = {"mm", "t", "s"};
  r.device.name = "GPU";
  r.work = {0, 0, 2e12};
  r.variants = {timed("naive", Role::baseline, 1.0), timed("fast", Role::optimized, 0.1),
                timed("lib", Role::reference, 0.05)};
  return r;
}

TEST(RenderText, ComputeAndReferenceColumnsOnlyWhenMeaningful) {
  const std::string text = render_text(matmul_like());
  EXPECT_NE(text.find("compute"), std::string::npos);
  EXPECT_NE(text.find("20.0 TFLOP/s"), std::string::npos) << text;  // 2e12 / 0.1 s
  EXPECT_NE(text.find("of lib"), std::string::npos);
  EXPECT_NE(text.find("50.0%"), std::string::npos) << text;  // 0.05 / 0.1

  Report plain = matmul_like();
  plain.work = {1e9, 1e9, 0};
  plain.variants.pop_back();
  const std::string no_extras = render_text(plain);
  EXPECT_EQ(no_extras.find("compute"), std::string::npos);
  EXPECT_EQ(no_extras.find("of lib"), std::string::npos);
}

TEST(RenderText, TheTimingLineSaysHowEachVariantWasTimed) {
  Report r = matmul_like();
  r.variants[0].timing.warmup = 5;
  EXPECT_NE(render_text(r).find("timing: CUDA events, median of 3 after 5 warm-up launches\n"),
            std::string::npos)
      << render_text(r);

  r.variants[0].timing.repeat = 429;
  r.variants[0].timing.stopped = TimingStop::noise;
  r.variants[1].timing.repeat = 156919;
  r.variants[1].timing.stopped = TimingStop::timeout;
  r.variants[2].timing.repeat = 8289;
  r.variants[2].timing.stopped = TimingStop::noise;
  const std::string text = render_text(r);
  EXPECT_NE(text.find("timing: CUDA events, adaptive: median of 429 to 156,919 samples per "
                      "variant after 5 warm-up launches (2 below the target noise, 1 stopped by "
                      "the timeout)\n"),
            std::string::npos)
      << text;
}

TEST(RenderText, FailedAndSkippedVariantsAreExplained) {
  Report r = matmul_like();
  r.variants[1].check.status = CheckStatus::failed;
  r.variants[1].check.message = "3 of 9 elements differ";
  r.variants[2].status = VariantStatus::skipped;
  r.variants[2].skip_reason = "needs 2 GPUs";
  const std::string text = render_text(r);
  EXPECT_NE(text.find("check failed: fast: 3 of 9 elements differ"), std::string::npos) << text;
  EXPECT_NE(text.find("skipped: lib: needs 2 GPUs"), std::string::npos) << text;
}

TEST(RenderText, CountersMissingSaysWhy) {
  Report r = matmul_like();
  for (auto& v : r.variants) v.counters.note = "counters unavailable (no permission)";
  r.warnings.push_back("counters unavailable (no permission); timing is reported without them");
  const std::string text = render_text(r);
  EXPECT_NE(text.find("counters: not collected: counters unavailable"), std::string::npos);
  EXPECT_NE(text.find("warning: counters unavailable"), std::string::npos);
}

// The kernels table names each kernel by its function, as ncu and the source do; one row stands
// for consecutive launches of one kernel.
TEST(RenderText, KernelsAreShownByTheirFunction) {
  Report r = matmul_like();
  Kernel k;
  k.name = "tiled";
  k.function = "void gpulab::labs::(anonymous namespace)::transpose_shared<gpulab::labs::"
               "(anonymous namespace)::RowMajorTile>(float const*, float*, int, int)";
  k.attributes.block_threads = 256;
  k.attributes.grid_blocks = 65536;
  r.variants[0].kernels = {k};
  Kernel step;
  step.name = "step";
  step.function = "void gpulab::labs::(anonymous namespace)::step(float*, float, int)";
  r.variants[1].kernels.assign(200, step);
  Kernel lib;
  lib.name = "library";
  lib.function = "void cub::DeviceReduceKernel<" + std::string(300, 'x') + ">(float*)";
  r.variants[2].kernels = {lib};
  const std::string text = render_text(r);
  EXPECT_NE(text.find("transpose_shared<RowMajorTile>"), std::string::npos) << text;
  EXPECT_NE(text.find("65,536"), std::string::npos) << text;
  EXPECT_NE(text.find("step (x200)"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(100, 'x')), std::string::npos) << "long names are cut";
  EXPECT_NE(text.find("cub::DeviceReduceKernel<\u2026xxx"), std::string::npos) << text;
}

// A report whose device could not be opened says "unknown", never "sm_00 · 0 SMs · 0 B L2"; one
// that knows only some of it shows what it knows.
TEST(RenderText, AnUnknownDeviceIsUnknownNotZero) {
  Report r;
  r.lab.name = "lab";
  const std::string text = render_text(r);
  EXPECT_NE(text.find("device: unknown"), std::string::npos) << text;
  EXPECT_EQ(text.find("sm_00"), std::string::npos) << text;
  EXPECT_EQ(text.find("0 SMs"), std::string::npos) << text;
  r.device.name = "NVIDIA H100 80GB HBM3";
  r.device.sm_count = 132;
  const std::string partial = render_text(r);
  EXPECT_NE(partial.find("NVIDIA H100 80GB HBM3 · 132 SMs\n"), std::string::npos) << partial;
}

}  // namespace
}  // namespace gpulab::report
