// The interval arithmetic of activity traces, their JSON form, their diagnosis and their chart,
// on small hand-made timelines whose figures can be worked out by hand.
#include <gtest/gtest.h>

#include "reports/base/errors.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/render/render_timeline.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/timeline.hpp"

namespace gpulab::report {
namespace {

Activity kernel(double start, double end, std::uint32_t stream = 7) {
  Activity a;
  a.kind = ActivityKind::kernel;
  a.name = "work";
  a.stream = stream;
  a.start = start;
  a.end = end;
  return a;
}

Activity copy(const char* direction, const char* host, double start, double end,
              std::uint64_t bytes, std::uint32_t stream = 7) {
  Activity a;
  a.kind = ActivityKind::copy;
  a.name = direction;
  a.stream = stream;
  a.start = start;
  a.end = end;
  a.bytes = bytes;
  a.source_memory = std::string(direction) == "HtoD" ? host : "device";
  a.destination_memory = std::string(direction) == "HtoD" ? "device" : host;
  return a;
}

Activity migration(const char* cause, double start, double end, std::uint64_t bytes) {
  Activity a;
  a.kind = ActivityKind::migration;
  a.name = "HtoD";
  a.cause = cause;
  a.start = start;
  a.end = end;
  a.bytes = bytes;
  return a;
}

Timeline timeline(std::vector<Activity> activities) {
  Timeline t;
  t.activities = std::move(activities);
  t.unified_memory.available = true;
  t.summary = summarize(t);
  return t;
}

// copy in [0, 4), kernel [4, 6), copy out [6, 10): nothing overlaps.
Timeline serial() {
  return timeline(
      {copy("HtoD", "pinned", 0, 4, 400), kernel(4, 6), copy("DtoH", "pinned", 6, 10, 400)});
}

// Two chunks on two streams: copies of one chunk run while the other's kernel runs.
//   stream 1: HtoD [0,2) K [2,4) DtoH [4,6)
//   stream 2:        HtoD [2,4) K [4,6) DtoH [6,8)
Timeline pipelined() {
  return timeline({copy("HtoD", "pinned", 0, 2, 200, 1), kernel(2, 4, 1),
                   copy("DtoH", "pinned", 4, 6, 200, 1), copy("HtoD", "pinned", 2, 4, 200, 2),
                   kernel(4, 6, 2), copy("DtoH", "pinned", 6, 8, 200, 2)});
}

TEST(Timeline, SerialCopiesDoNotOverlap) {
  const auto s = serial().summary;
  EXPECT_DOUBLE_EQ(s.span_seconds, 10);
  EXPECT_DOUBLE_EQ(s.kernel_seconds, 2);
  EXPECT_DOUBLE_EQ(s.transfer_seconds, 8);
  EXPECT_DOUBLE_EQ(s.overlap_fraction, 0);
  EXPECT_DOUBLE_EQ(s.exposed_transfer_fraction, 0.8);
  EXPECT_DOUBLE_EQ(s.idle_fraction, 0);
  EXPECT_EQ(s.kernels, 1);
  EXPECT_EQ(s.copies, 2);
  ASSERT_EQ(s.rates.size(), 2u);
  for (const auto& r : s.rates) {
    EXPECT_EQ(r.host_memory, "pinned");
    EXPECT_DOUBLE_EQ(r.bandwidth, 100);  // 400 bytes in 4 s
  }
}

TEST(Timeline, PipelinedChunksOverlapCopiesWithKernels) {
  const auto s = pipelined().summary;
  EXPECT_DOUBLE_EQ(s.span_seconds, 8);
  EXPECT_DOUBLE_EQ(s.kernel_seconds, 4);  // [2, 6)
  EXPECT_DOUBLE_EQ(s.transfer_seconds, 8);
  EXPECT_DOUBLE_EQ(s.overlap_fraction, 0.5);           // kernels [2, 6) all overlap a copy
  EXPECT_DOUBLE_EQ(s.exposed_transfer_fraction, 0.5);  // [0, 2) and [6, 8)
  // Two copies in the same direction at once count once in the busy time of the rate.
  for (const auto& r : s.rates) EXPECT_DOUBLE_EQ(r.busy_seconds, 4) << r.direction;
}

TEST(Timeline, IdleGapsBetweenShortKernels) {
  const auto t = timeline({kernel(0, 1e-6), kernel(3e-6, 4e-6), kernel(6e-6, 7e-6)});
  EXPECT_NEAR(t.summary.idle_fraction, 4.0 / 7.0, 1e-12);
  EXPECT_NEAR(t.summary.mean_kernel_seconds, 1e-6, 1e-15);
  const auto d = diagnose_timeline(t, Thresholds());
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "launch-overhead");
  EXPECT_EQ(d.verdict, "launch-bound");
}

TEST(Timeline, OnDemandMigrationsAreNotTransfers) {
  const auto t = timeline({kernel(0, 10), migration("on-demand", 1, 9, 800)});
  EXPECT_DOUBLE_EQ(t.summary.on_demand_seconds, 8);
  EXPECT_DOUBLE_EQ(t.summary.on_demand_fraction, 0.8);
  EXPECT_DOUBLE_EQ(t.summary.transfer_seconds, 0);
  EXPECT_DOUBLE_EQ(t.summary.overlap_fraction, 0);
  EXPECT_EQ(t.summary.on_demand_bytes, 800u);
  EXPECT_EQ(t.summary.migrated_htod_bytes, 800u);
  const auto d = diagnose_timeline(t, Thresholds());
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "um-page-faults");
  EXPECT_EQ(d.verdict, "migration-bound");  // though the kernel spans the whole timeline
  EXPECT_EQ(d.path.back().node, "launch-gaps");
  EXPECT_EQ(d.path.back().answer, "no");  // one kernel: no gaps between kernels
}

TEST(Timeline, PrefetchIsATransfer) {
  const auto t = timeline({migration("prefetch", 0, 9, 900), kernel(9, 10)});
  EXPECT_DOUBLE_EQ(t.summary.transfer_seconds, 9);
  EXPECT_EQ(t.summary.on_demand_bytes, 0u);
  const auto d = diagnose_timeline(t, Thresholds());
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "host-device-transfers");
  EXPECT_EQ(d.verdict, "transfer-bound");
}

TEST(Timeline, DiagnosisFlagsSerialTransfersButNotPipelinedOnes) {
  const auto serial_d = diagnose_timeline(serial(), Thresholds());
  ASSERT_FALSE(serial_d.findings.empty());
  EXPECT_EQ(serial_d.findings.front().id, "host-device-transfers");
  EXPECT_NEAR(serial_d.findings.front().score, 0.4 + 0.6 * 0.8, 1e-12);

  Thresholds strict;
  strict.set("transfers.exposed_fraction", 0.6);
  const auto piped = diagnose_timeline(pipelined(), strict);
  EXPECT_TRUE(piped.findings.empty());
  EXPECT_EQ(piped.thresholds_overridden.at("transfers.exposed_fraction"), 0.6);
}

TEST(Timeline, UnifiedMemoryNotMeasuredWhenCountersAreMissing) {
  auto t = serial();
  t.unified_memory.available = false;
  const auto d = diagnose_timeline(t, Thresholds());
  bool seen = false;
  for (const auto& step : d.path)
    if (step.node == "um-faults") {
      seen = true;
      EXPECT_EQ(step.answer, "not measured");
    }
  EXPECT_TRUE(seen);
}

TEST(Timeline, PrincipalFindingOfAVariantComesFromItsTimeline) {
  Variant v;
  v.name = "serial";
  v.timeline = serial();
  v.timeline->diagnosis = diagnose_timeline(*v.timeline, Thresholds());
  EXPECT_TRUE(has_diagnosis(v));
  EXPECT_EQ(principal_finding(v), "host-device-transfers");
  EXPECT_TRUE(carries_finding(v, "host-device-transfers"));
}

TEST(Timeline, JsonRoundTripKeepsActivitiesAndDerivesTheSummaryAgain) {
  Report r;
  r.device.name = "test";
  r.lab.name = "streams";
  auto& v = r.variants.emplace_back();
  v.name = "overlapped";
  v.timing.median = 8;
  v.timeline = pipelined();
  v.timeline->unified_memory.note = "no GPU fault records";
  v.timeline->diagnosis = diagnose_timeline(*v.timeline, Thresholds());
  auto json = to_json(r);
  json["variants"][0]["timeline"]["summary"]["overlap_fraction"] = 0.99;  // ignored when read
  const auto back = from_json(json);
  const auto& t = *back.variants.at(0).timeline;
  ASSERT_EQ(t.activities.size(), 6u);
  EXPECT_EQ(t.activities[1].name, "work");
  EXPECT_EQ(t.activities[1].stream, 1u);
  EXPECT_EQ(t.unified_memory.note, "no GPU fault records");
  EXPECT_FALSE(t.unified_memory.gpu_page_faults.has_value());
  EXPECT_DOUBLE_EQ(t.summary.overlap_fraction, 0.5);
  ASSERT_TRUE(t.diagnosis.has_value());
  EXPECT_EQ(t.diagnosis->verdict, v.timeline->diagnosis->verdict);
}

// Two GPUs, a compute kernel and an NCCL kernel each:
//   GPU 0: work [0,4)  nccl [4,8)   nothing alongside the collective
//   GPU 1: work [0,4)  nccl [2,8)   2 of its 6 under compute
Timeline two_gpus() {
  auto on = [](Activity a, std::uint32_t device, const char* name) {
    a.device = device;
    a.name = name;
    return a;
  };
  return timeline(
      {on(kernel(0, 4, 1), 0, "work"), on(kernel(4, 8, 1), 0, "ncclDevKernel_AllReduce"),
       on(kernel(0, 4, 1), 1, "work"), on(kernel(2, 8, 2), 1, "ncclDevKernel_AllReduce")});
}

TEST(Timeline, CommunicationIsMeasuredPerGpuWithTheComputeAlongsideIt) {
  const auto t = two_gpus();
  EXPECT_DOUBLE_EQ(t.summary.communication_seconds, 5);             // (4 + 6) / 2 GPUs
  EXPECT_DOUBLE_EQ(t.summary.communication_overlap_fraction, 0.2);  // 2 of 10
  EXPECT_EQ(serial().summary.communication_seconds, 0) << "no NCCL kernel, no communication";
  Report r;
  r.variants.emplace_back().timeline = t;
  const std::string text = render_timelines(r);
  EXPECT_NE(text.find("communication under compute"), std::string::npos) << text;
  r.variants.front().timeline = serial();
  EXPECT_EQ(render_timelines(r).find("communication"), std::string::npos) << "rows shown only then";
}

// Each GPU's streams get rows of their own (both GPUs' stream ids are 1 and 2 here), and the
// collectives a symbol of their own.
TEST(Timeline, ChartOfSeveralGpusNamesEachRowsGpuAndMarksTheCollectives) {
  const std::string chart = timeline_chart(two_gpus(), 8);
  EXPECT_NE(chart.find("GPU 0 · stream 1 |KKKKCCCC|"), std::string::npos) << chart;
  EXPECT_NE(chart.find("GPU 1 · stream 1 |KKKK....|"), std::string::npos) << chart;
  EXPECT_NE(chart.find("GPU 1 · stream 2 |..CCCCCC|"), std::string::npos) << chart;
  Report r;
  r.variants.emplace_back().timeline = two_gpus();
  EXPECT_NE(render_timelines(r).find("C communication (NCCL)"), std::string::npos);
  EXPECT_EQ(timeline_chart(serial(), 8).find("GPU"), std::string::npos) << "one GPU: streams";
}

TEST(Timeline, BusBandwidthFollowsNcclTestsFromTheWorkModel) {
  Report r;
  r.work.collective_bytes = 1e9;
  for (int ranks : {2, 4}) {
    r.work.ranks = ranks;
    auto& v = r.variants.emplace_back();
    v.timeline = two_gpus();
    summarize_timelines(r);
    const auto& s = r.variants.back().timeline->summary;
    EXPECT_DOUBLE_EQ(s.algorithm_bandwidth, 2e8) << ranks;  // 1e9 B over 5 s
    EXPECT_DOUBLE_EQ(s.bus_bandwidth, 2e8 * 2 * (ranks - 1) / ranks) << ranks;
  }
  r.work.collective_bytes = 0;
  summarize_timelines(r);
  EXPECT_EQ(r.variants.front().timeline->summary.bus_bandwidth, 0) << "no collective, no bandwidth";
}

TEST(Timeline, JsonKeepsEachActivitysDevice) {
  Report r;
  r.lab.name = "nccl";
  r.variants.emplace_back().timeline = two_gpus();
  const auto json = to_json(r);
  EXPECT_FALSE(json["variants"][0]["timeline"]["activities"][0].contains("device"))
      << "0: left out";
  const auto back = from_json(json);
  const auto& activities = back.variants.at(0).timeline->activities;
  ASSERT_EQ(activities.size(), 4u);
  int on_gpu_1 = 0;
  for (const auto& a : activities) on_gpu_1 += a.device == 1;
  EXPECT_EQ(on_gpu_1, 2);
}

TEST(Timeline, JsonRejectsAnActivityThatEndsBeforeItStarts) {
  Report r;
  r.device.name = "test";
  r.lab.name = "streams";
  auto& v = r.variants.emplace_back();
  v.name = "serial";
  v.timeline = serial();
  auto json = to_json(r);
  json["variants"][0]["timeline"]["activities"][0]["end"] = -1.0;
  try {
    from_json(json);
    FAIL() << "accepted";
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("variants[0].timeline.activities[0].end"),
              std::string::npos)
        << e.what();
  }
}

TEST(Timeline, ChartShowsEachStreamOverTime) {
  const std::string chart = timeline_chart(pipelined(), 8);
  EXPECT_EQ(chart,
            "  stream 1 |>>KK<<..|\n"
            "  stream 2 |..>>KK<<|\n");
}

}  // namespace
}  // namespace gpulab::report
