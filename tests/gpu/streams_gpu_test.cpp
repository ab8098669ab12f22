// The streams lab on a real GPU: every variant correct when the chunks do not divide the data
// (and when some are empty), and the timeline's signature at the default size: copies from
// pinned memory far faster than from pageable memory, nothing overlapping on one stream, and
// copies in both directions running under the kernels once the chunks are spread over streams.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "app/lab_runner.hpp"
#include "gpu/lab_run.hpp"
#include "reports/report.hpp"

namespace gpulab {
namespace {

// size 1 in 3 chunks: two chunks are empty and skipped. 4099 in 3 chunks: 1366, 1366 and 1367
// elements, fewer chunks than the overlapped variant's 4 streams. 100 in 64 chunks over 5
// streams: chunks of 1 and 2 elements, streams reused. 7 rounds: the unrolled loop's remainder.
TEST(StreamsGpu, AllVariantsCorrectAtSmallOddSizes) {
  GPULAB_REQUIRE_GPU();
  for (int n : {1, 4099}) {
    const auto r = test::run_lab("streams", test::check_only(n, {{"chunks", 3}, {"rounds", 7}}));
    ASSERT_EQ(r.variants.size(), 3u);
    test::expect_exact(r, static_cast<std::uint64_t>(n), fmt::format("n={}", n));
  }
  const auto r = test::run_lab(
      "streams", test::check_only(100, {{"chunks", 64}, {"streams", 5}, {"rounds", 1}}));
  ASSERT_EQ(r.variants.size(), 3u);
  test::expect_exact(r, 100u, "n=100, 64 chunks");
}

// One run at the default size (2^28 words, 1 GiB each way, 8 chunks, 4 streams, 1024 rounds),
// with the lab's own launch counts (a pageable launch takes ~0.3 s) and no counters.
const report::Report& default_run() {
  static const report::Report r = test::run_lab("streams", app::RunSettings{});
  return r;
}

// The rate of host-to-device copies from `host_memory` in a variant's timeline; 0 when absent.
double htod_bandwidth(const report::Variant& v, const std::string& host_memory) {
  if (!v.timeline) return 0;
  for (const auto& rate : v.timeline->summary.rates)
    if (rate.direction == "HtoD" && rate.host_memory == host_memory) return rate.bandwidth;
  return 0;
}

TEST(StreamsGpu, DefaultSizeCorrectAndTraced) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  EXPECT_EQ(r.params.at("size"), 1 << 28);
  ASSERT_EQ(r.variants.size(), 3u);
  test::expect_exact(r, 1u << 28, "default");
  for (const auto& v : r.variants) {
    ASSERT_TRUE(v.timeline.has_value()) << v.name;
    EXPECT_EQ(v.timeline->summary.kernels, 8) << v.name << ": one kernel per chunk";
  }
}

// On one stream every copy and kernel waits for the one before: the expected overlap is 0 (the
// threshold leaves room for record boundaries). Overlapped: kernels (~16 ms) run almost
// entirely under copies in a span of ~26 ms: ~0.6 expected.
TEST(StreamsGpu, OnlyTheOverlappedVariantOverlaps) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  for (const char* name : {"serial-pageable", "serial-pinned", "overlapped"}) {
    const auto* v = r.find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    ASSERT_TRUE(v->timeline.has_value()) << name;
    RecordProperty(std::string(name) + "_overlap",
                   fmt::format("{:.3f}", v->timeline->summary.overlap_fraction));
  }
  EXPECT_LT(r.find_variant("serial-pageable")->timeline->summary.overlap_fraction, 0.05);
  EXPECT_LT(r.find_variant("serial-pinned")->timeline->summary.overlap_fraction, 0.05);
  EXPECT_GT(r.find_variant("overlapped")->timeline->summary.overlap_fraction, 0.5);
}

// Measured on the H200 with 256 MiB copies: pageable 3.5 GB/s, pinned 52 GB/s (~15x).
TEST(StreamsGpu, PinnedCopiesAreFasterThanPageable) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* pageable = r.find_variant("serial-pageable");
  const auto* pinned = r.find_variant("serial-pinned");
  ASSERT_NE(pageable, nullptr);
  ASSERT_NE(pinned, nullptr);
  ASSERT_TRUE(pageable->timeline.has_value());
  ASSERT_TRUE(pinned->timeline.has_value());
  const double slow = htod_bandwidth(*pageable, "pageable");
  const double fast = htod_bandwidth(*pinned, "pinned");
  RecordProperty("pageable_htod_GBps", fmt::format("{:.2f}", slow / 1e9));
  RecordProperty("pinned_htod_GBps", fmt::format("{:.2f}", fast / 1e9));
  ASSERT_GT(slow, 0.0) << "no host-to-device copy from pageable memory in serial-pageable";
  ASSERT_GT(fast, 0.0) << "no host-to-device copy from pinned memory in serial-pinned";
  EXPECT_GT(fast, 3.0 * slow);
}

// Napkin math (labs/streams.cu): serial-pinned ~58 ms (21 + 16 + 21), overlapped ~26 ms, ~2.2x.
TEST(StreamsGpu, OverlapPays) {
  GPULAB_REQUIRE_GPU();
  const auto& r = default_run();
  const auto* pinned = r.find_variant("serial-pinned");
  const auto* overlapped = r.find_variant("overlapped");
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(overlapped, nullptr);
  ASSERT_GT(overlapped->timing.median, 0.0);
  const double speedup = pinned->timing.median / overlapped->timing.median;
  RecordProperty("serial_pinned_ms", fmt::format("{:.2f}", pinned->timing.median * 1e3));
  RecordProperty("overlapped_ms", fmt::format("{:.2f}", overlapped->timing.median * 1e3));
  EXPECT_GE(speedup, 1.5) << "overlapped vs serial-pinned: " << speedup << "x";
}

}  // namespace
}  // namespace gpulab
