// The unified-memory lab on a real GPU (small odd sizes: tests/gpu/lab_registry_test.cpp): the
// timeline's signature at the default size: the on-demand kernel faults in the whole input and
// waits for it; a prefetch moves it in bulk before a fast kernel; read-mostly pages stay on the
// GPU between launches; the explicit variant copies from pinned memory.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "reports/report.hpp"

namespace gpulab {
namespace {

constexpr double kDefaultInputBytes = 4.0 * (1 << 26);  // 256 MiB of floats

// 1 element: a single page; 100003: 98 pages, the last one partly used, and a partial block.
// One run at the default size (2^26 floats) with the lab's launch counts and no counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("unified-memory", app::RunSettings{});
  return r;
}

// The variant's timeline summary; fails the test (and returns nullptr) when there is none.
const report::TimelineSummary* summary(const report::Report& r, const char* name) {
  const auto* v = r.find_variant(name);
  EXPECT_NE(v, nullptr) << name;
  if (!v) return nullptr;
  EXPECT_TRUE(v->timeline.has_value()) << name << ": no timeline";
  return v->timeline ? &v->timeline->summary : nullptr;
}

// Seconds the variant's kernels ran, from the trace's kernel records.
double traced_kernel_seconds(const report::Variant& v) {
  double total = 0;
  for (const auto& a : v.timeline->activities)
    if (a.kind == report::ActivityKind::kernel) total += a.end - a.start;
  return total;
}

TEST(UnifiedMemoryGpu, DefaultSizeCorrect) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  EXPECT_EQ(r.params.at("size"), 1 << 26);
  ASSERT_EQ(r.variants.size(), 4u);
  test::expect_exact(r, 1u << 26, "default");
}

// prepare() brings the pages back to the host before each launch, so the traced launch faults
// the input in again (the driver's own prefetching next to a fault counts as on-demand too).
// How much of it the driver migrates varies: the H200 recorded 129 MB and 227 MB of the 268 MB
// input as on-demand migrations in two runs (0.48x, 0.85x): at least a quarter.
TEST(UnifiedMemoryGpu, OnDemandMigratesTheWholeInputThroughFaults) {
  GPULAB_REQUIRE_GPU();
  const auto* s = summary(default_run(), "on-demand");
  ASSERT_NE(s, nullptr);
  RecordProperty("on_demand_MB", fmt::format("{:.1f}", s->on_demand_bytes / 1e6));
  EXPECT_GE(static_cast<double>(s->on_demand_bytes), 0.25 * kDefaultInputBytes);
}

// The prefetch moves the whole input (expected 1.0x) before the kernel, which then finds every
// page in place: no on-demand migration expected, at most 5% of the input.
TEST(UnifiedMemoryGpu, PrefetchMovesTheInputInBulk) {
  GPULAB_REQUIRE_GPU();
  const auto* s = summary(default_run(), "prefetch");
  ASSERT_NE(s, nullptr);
  RecordProperty("prefetch_migrated_MB", fmt::format("{:.1f}", s->migrated_htod_bytes / 1e6));
  EXPECT_LE(static_cast<double>(s->on_demand_bytes), 0.05 * kDefaultInputBytes);
  EXPECT_GE(static_cast<double>(s->migrated_htod_bytes), 0.9 * kDefaultInputBytes);
}

// The GPU's read-only copies survive the CPU's reads between launches: the traced launch (after
// the warm-up and the timed ones) moves nothing; at most 5% of the input.
TEST(UnifiedMemoryGpu, ReadMostlyPagesStayOnTheGpu) {
  GPULAB_REQUIRE_GPU();
  const auto* s = summary(default_run(), "advise-read-mostly");
  ASSERT_NE(s, nullptr);
  RecordProperty("read_mostly_migrated_MB", fmt::format("{:.1f}", s->migrated_htod_bytes / 1e6));
  EXPECT_LE(static_cast<double>(s->migrated_htod_bytes), 0.05 * kDefaultInputBytes);
}

// One cudaMemcpyAsync of the whole input from pinned memory.
TEST(UnifiedMemoryGpu, ExplicitCopiesFromPinnedMemory) {
  GPULAB_REQUIRE_GPU();
  const auto* s = summary(default_run(), "explicit");
  ASSERT_NE(s, nullptr);
  std::uint64_t pinned_htod = 0;
  for (const auto& rate : s->rates)
    if (rate.direction == "HtoD" && rate.host_memory == "pinned") pinned_htod += rate.bytes;
  EXPECT_GE(static_cast<double>(pinned_htod), kDefaultInputBytes);
}

// On the H200 on-demand paging is hundreds of times slower than after a prefetch (docs/cards.md);
// at least 10x asserted.
TEST(UnifiedMemoryGpu, OnDemandKernelWaitsForItsPages) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* on_demand = r.find_variant("on-demand");
  const auto* prefetch = r.find_variant("prefetch");
  ASSERT_NE(on_demand, nullptr);
  ASSERT_NE(prefetch, nullptr);
  ASSERT_TRUE(on_demand->timeline.has_value());
  ASSERT_TRUE(prefetch->timeline.has_value());
  const double faulting = traced_kernel_seconds(*on_demand);
  const double resident = traced_kernel_seconds(*prefetch);
  RecordProperty("on_demand_kernel_ms", fmt::format("{:.3f}", faulting * 1e3));
  RecordProperty("prefetched_kernel_ms", fmt::format("{:.3f}", resident * 1e3));
  ASSERT_GT(resident, 0.0) << "no kernel record in prefetch's timeline";
  EXPECT_GE(faulting, 10.0 * resident);
}

}  // namespace
}  // namespace gpulab
