// The decision tree: on the H200 fixtures (real counters) and node by node on hand-picked
// counter values (inputs chosen to sit on either side of a threshold, not measurements).
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/cli.hpp"
#include "reports/base/errors.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;

const std::string kTranspose = std::string(GPULAB_FIXTURES_DIR) + "/transpose_h200.json";

Report diagnosed(const std::string& path, const Thresholds& t = {}) {
  Report r = load_report(path);
  diagnose_report(r, t);
  return r;
}

// ---- on recorded H200 reports -----------------------------------------------------------------

TEST(DiagnosisFixture, TransposeExpectedPrincipalFindings) {
  const Report r = diagnosed(kTranspose);
  EXPECT_EQ(principal_finding(*r.find_variant("naive")), "uncoalesced-global");
  EXPECT_EQ(principal_finding(*r.find_variant("tiled")), "shared-bank-conflicts");
  EXPECT_EQ(principal_finding(*r.find_variant("padded")), "memory-bound-below-roof");
  EXPECT_EQ(principal_finding(*r.find_variant("swizzled")), "memory-bound-below-roof");
}

TEST(DiagnosisFixture, OptimizedVariantsDoNotCarryTheBaselineFinding) {
  const Report r = diagnosed(kTranspose);
  for (const char* v : {"tiled", "padded", "swizzled"})
    EXPECT_FALSE(carries_finding(*r.find_variant(v), "uncoalesced-global")) << v;
  for (const char* v : {"padded", "swizzled"})
    EXPECT_FALSE(carries_finding(*r.find_variant(v), "shared-bank-conflicts")) << v;
}

TEST(DiagnosisFixture, PathStartsAtTheRootAndRecordsValues) {
  const Report r = diagnosed(kTranspose);
  const auto& d = *r.find_variant("tiled")->kernels.at(0).diagnosis;
  ASSERT_GE(d.path.size(), 5u);
  EXPECT_EQ(d.path[0].node, "bottleneck");
  EXPECT_EQ(d.path[0].answer, "neither");
  EXPECT_EQ(d.verdict, "latency-bound");
  const auto it = std::find_if(d.path.begin(), d.path.end(),
                               [](const PathStep& s) { return s.node == "shared-banks"; });
  ASSERT_NE(it, d.path.end());
  EXPECT_EQ(it->answer, "yes");
  EXPECT_EQ(it->finding, "shared-bank-conflicts");
  bool has_value = false;
  for (const auto& e : it->evidence) has_value = has_value || (e.value && *e.value > 10);
  EXPECT_TRUE(has_value) << "the measured wavefronts per instruction are in the evidence";
  const Report padded = diagnosed(kTranspose);
  EXPECT_EQ(padded.find_variant("padded")->kernels[0].diagnosis->path[0].answer, "memory");
}

TEST(DiagnosisFixture, ThresholdOverrideChangesTheAnswerAndIsRecorded) {
  Thresholds t;
  t.set("shared_banks.excess_per_inst", 100);
  const Report r = diagnosed(kTranspose, t);
  const auto& d = *r.find_variant("tiled")->kernels[0].diagnosis;
  EXPECT_FALSE(carries_finding(*r.find_variant("tiled"), "shared-bank-conflicts"));
  EXPECT_EQ(d.thresholds_overridden.at("shared_banks.excess_per_inst"), 100);
  EXPECT_THROW(t.set("no.such.threshold", 1), gpulab::UsageError);
  EXPECT_THROW(t.set_from_text("occupancy.achieved"), gpulab::UsageError);
  EXPECT_THROW(t.set_from_text("occupancy.achieved=lots"), gpulab::UsageError);
}

TEST(DiagnosisFixture, DiagnosisSurvivesJsonRoundTrip) {
  const Report r = diagnosed(kTranspose);
  const auto json = to_json(r);
  EXPECT_EQ(json["variants"][1]["kernels"][0]["diagnosis"]["principal"], "shared-bank-conflicts");
  EXPECT_EQ(to_json(from_json(json)), json);
}

// ---- node by node -----------------------------------------------------------------------------

struct Case {
  Kernel kernel;
  Variant variant;
  WorkModel model{1e9, 1e9, 0};
  DeviceInfo device;
  std::int64_t launches = 1;
  Case() {
    device.sm_count = 132;
    kernel.name = "k";
    kernel.attributes = {32, 0, 0, 0, 256, 132 * 8 * 10, 8, 1.0};
    // An unremarkable kernel: coalesced, no shared memory, no local memory, full warps.
    kernel.metrics = {{m::dram_pct, 30},        {m::sm_pct, 20},
                      {m::gld_sectors, 4e6},    {m::gld_requests, 1e6},
                      {m::gst_sectors, 4e6},    {m::gst_requests, 1e6},
                      {m::shld_wavefronts, 0},  {m::shld_inst, 0},
                      {m::shst_wavefronts, 0},  {m::shst_inst, 0},
                      {m::local_ld_bytes, 0},   {m::local_st_bytes, 0},
                      {m::warps_active_pct, 90}, {m::threads_per_inst, 32},
                      {m::duration, 1e6},       {m::dram_read, 1e9},
                      {m::dram_write, 1e9},     {m::atom_requests, 0},
                      {m::red_requests, 0},     {m::warp_latency, 20},
                      {m::stall_long_scoreboard, 2}, {m::stall_barrier, 1}};
    variant.roof_fraction = 0.3;
  }
  Diagnosis run(const Thresholds& t = {}) {
    kernel.derived = derive(kernel, &model);
    return diagnose({&kernel, &variant, &model, &device, launches}, t);
  }
};

std::vector<std::string> ids(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& f : d.findings) out.push_back(f.id);
  return out;
}

bool has(const Diagnosis& d, const std::string& id) {
  const auto v = ids(d);
  return std::find(v.begin(), v.end(), id) != v.end();
}

TEST(DecisionTree, UnremarkableKernelHasNoProblemFindings) {
  const auto d = Case().run();
  EXPECT_EQ(d.verdict, "latency-bound");
  EXPECT_TRUE(d.findings.empty()) << ::testing::PrintToString(ids(d));
}

TEST(DecisionTree, Coalescing) {
  Case c;
  c.kernel.metrics[m::gst_sectors] = 32e6;  // 32 sectors per store request
  const auto d = c.run();
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].id, "uncoalesced-global");
  EXPECT_EQ(d.findings[0].severity, "high");
  c.kernel.metrics[m::gst_sectors] = 7.9e6;  // just under the threshold of 8
  EXPECT_FALSE(has(c.run(), "uncoalesced-global"));
}

TEST(DecisionTree, EachDirectionIsJudgedOnItsOwnPattern) {
  Case c;  // 4M load and 4M store sectors, 128 MB each, all of the DRAM traffic
  c.kernel.metrics[m::dram_read] = 128e6;
  c.kernel.metrics[m::dram_write] = 128e6;
  c.kernel.metrics[m::gld_bytes_requested] = 64e6;   // loads move twice what they use
  c.kernel.metrics[m::gst_bytes_requested] = 128e6;  // stores are coalesced: 1.33 combined
  const auto d = c.run();
  ASSERT_TRUE(has(d, "uncoalesced-global")) << "a strided load, whatever the stores do";
  EXPECT_DOUBLE_EQ(d.findings.at(0).score, 0.4 + 0.6 * (1.0 - 192.0 / 256.0));
  // One partial sum per block: 8x on a few kilobytes beside coalesced loads costs nothing.
  Case r;
  r.kernel.metrics[m::gld_bytes_requested] = 128e6;
  r.kernel.metrics[m::gst_sectors] = 1000;
  r.kernel.metrics[m::gst_bytes_requested] = 4000;
  EXPECT_FALSE(has(r.run(), "uncoalesced-global"));
}

TEST(DecisionTree, OverfetchOnAFewBytesIsNegligible) {
  Case c;  // loads through cp.async (no LDG bytes), one 4-byte store per 1,000 elements
  c.kernel.metrics[m::gld_bytes_requested] = 0;
  c.kernel.metrics[m::gst_sectors] = 1e3;
  c.kernel.metrics[m::gst_bytes_requested] = 4e3;  // 8x over-fetch, on 32 kB of 2 GB
  const auto d = c.run();
  EXPECT_FALSE(has(d, "uncoalesced-global"));
  const auto step = std::find_if(d.path.begin(), d.path.end(),
                                 [](const PathStep& s) { return s.node == "coalescing"; });
  ASSERT_NE(step, d.path.end());
  EXPECT_EQ(step->answer, "yes, negligible");
}

TEST(DecisionTree, AKernelReportsAtMostThreeFindingsTheRestRankedOut) {
  Case c;  // four problems: few warps, waits on memory, strided loads, half-empty warps
  c.kernel.metrics[m::warps_active_pct] = 20;
  c.kernel.metrics[m::stall_long_scoreboard] = 12;  // 60% of 20 cycles
  c.kernel.metrics[m::gld_sectors] = 16e6;          // 16 sectors per 4-byte request: 4x
  c.kernel.metrics[m::threads_per_inst] = 16;
  Thresholds all;
  all.set("diagnosis.max_findings", 10);
  const Diagnosis every = c.run(all);
  ASSERT_EQ(every.findings.size(), 4u) << "the four problems, uncapped";
  const Diagnosis d = c.run();
  ASSERT_EQ(d.findings.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(d.findings[i].id, every.findings[i].id);
  const std::string fourth = every.findings[3].id;
  const auto step = std::find_if(d.path.begin(), d.path.end(),
                                 [&](const PathStep& s) { return s.answer == "yes, ranked out"; });
  ASSERT_NE(step, d.path.end()) << "the fourth problem's node says why it made no finding";
  EXPECT_TRUE(step->finding.empty());
  EXPECT_EQ(std::count_if(d.path.begin(), d.path.end(),
                          [](const PathStep& s) { return s.answer == "yes, ranked out"; }),
            1);
  EXPECT_FALSE(has(d, fourth));
}

TEST(DecisionTree, OverfetchSeesThroughWideAccesses) {
  Case c;
  c.kernel.metrics[m::gld_sectors] = 16e6;  // 16 sectors per request...
  c.kernel.metrics[m::gld_bytes_requested] = 512e6;  // ...all of them asked for (float4)
  c.kernel.metrics[m::gst_bytes_requested] = 128e6;
  EXPECT_FALSE(has(c.run(), "uncoalesced-global"));
  c.kernel.metrics[m::gld_bytes_requested] = 128e6;  // a quarter of them used: 4x over-fetch
  EXPECT_EQ(c.run().findings.at(0).id, "uncoalesced-global");
}

TEST(DecisionTree, OverfetchExplainsDramReadsBeforeRedundancyDoes) {
  Case c;  // the model: 1 GB read, 1 GB written
  c.kernel.metrics[m::gld_sectors] = 250e6;  // 8 GB of sectors for 1 GB asked: 8x over-fetch
  c.kernel.metrics[m::gld_bytes_requested] = 1e9;
  c.kernel.metrics[m::gst_sectors] = 31.25e6;
  c.kernel.metrics[m::gst_bytes_requested] = 1e9;
  c.kernel.metrics[m::dram_read] = 8e9;  // 8x the model: all of it over-fetch
  auto d = c.run();
  EXPECT_EQ(d.findings.at(0).id, "uncoalesced-global");
  EXPECT_FALSE(has(d, "redundant-dram-traffic"));
  c.kernel.metrics[m::dram_read] = 32e9;  // 4x more than over-fetch explains: re-reads
  EXPECT_TRUE(has(c.run(), "redundant-dram-traffic"));
}

TEST(DecisionTree, RedundantTrafficNeedsAModel) {
  Case c;
  c.kernel.metrics[m::dram_read] = 4e9;  // 5e9 moved for 2e9 of work
  EXPECT_TRUE(has(c.run(), "redundant-dram-traffic"));
  c.kernel.derived = derive(c.kernel, nullptr);
  const auto d = diagnose({&c.kernel, &c.variant, nullptr, &c.device}, Thresholds());
  EXPECT_FALSE(has(d, "redundant-dram-traffic"));
  const auto step = std::find_if(d.path.begin(), d.path.end(),
                                 [](const PathStep& s) { return s.node == "dram-excess"; });
  ASSERT_NE(step, d.path.end());
  EXPECT_EQ(step->answer, "not measured");
}

TEST(DecisionTree, MemoryBoundAtRoofOnlyWhenNothingElse) {
  Case c;
  c.kernel.metrics[m::dram_pct] = 80;
  c.variant.roof_fraction = 0.95;
  auto d = c.run();
  EXPECT_EQ(d.verdict, "memory-bound");
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings[0].id, "memory-bound-at-roof");
  c.kernel.metrics[m::gld_sectors] = 16e6;  // and uncoalesced loads
  d = c.run();
  EXPECT_EQ(d.findings[0].id, "uncoalesced-global") << "a problem ranks above 'at the roof'";
}

TEST(DecisionTree, SharedBankConflicts) {
  Case c;
  c.kernel.metrics[m::shld_inst] = 1e5;
  c.kernel.metrics[m::shld_wavefronts] = 1.2e5;  // 0.2 excess per instruction: fine
  c.kernel.metrics[m::shst_inst] = 1e5;
  c.kernel.metrics[m::shst_wavefronts] = 1e5;
  EXPECT_FALSE(has(c.run(), "shared-bank-conflicts"));
  c.kernel.metrics[m::shld_wavefronts] = 32e5;
  EXPECT_EQ(c.run().findings.at(0).id, "shared-bank-conflicts");
}

TEST(DecisionTree, BankConflictsCountWhereWarpsWaitOnSharedMemory) {
  Case c;
  c.kernel.metrics[m::shld_inst] = 1e5;
  c.kernel.metrics[m::shld_wavefronts] = 32e5;  // 31 excess wavefronts per load
  c.kernel.metrics[m::shst_inst] = 1e5;
  c.kernel.metrics[m::shst_wavefronts] = 1e5;
  // Queue and results waits of 3 cycles of 20: 15%, under shared_banks.stall_share 0.2.
  c.kernel.metrics[m::stall_mio_throttle] = 1;
  c.kernel.metrics[m::stall_short_scoreboard] = 2;
  EXPECT_FALSE(has(c.run(), "shared-bank-conflicts"));
  Thresholds t;
  t.set("shared_banks.stall_share", 0.1);
  EXPECT_TRUE(has(c.run(t), "shared-bank-conflicts"));
  // At 5 cycles of 20 it counts, and it costs at most the quarter of the time spent waiting.
  c.kernel.metrics[m::stall_short_scoreboard] = 4;
  const Diagnosis d = c.run();
  const auto f = std::find_if(d.findings.begin(), d.findings.end(),
                              [](const Finding& x) { return x.id == "shared-bank-conflicts"; });
  ASSERT_NE(f, d.findings.end());
  EXPECT_NEAR(f->score, 0.4 + 0.6 * 0.25, 1e-9);  // a problem finding's score of severity 0.25
}

TEST(DecisionTree, LocalMemory) {
  Case c;
  c.kernel.metrics[m::local_st_bytes] = 100e6;  // vs 256 MB of global sectors
  EXPECT_TRUE(has(c.run(), "local-memory"));
}

TEST(DecisionTree, LatencyAndSyncFromStalls) {
  Case c;
  c.kernel.metrics[m::stall_long_scoreboard] = 12;  // 60% of 20
  EXPECT_TRUE(has(c.run(), "latency-bound"));
  c.kernel.metrics[m::stall_barrier] = 8;  // 40% of 20
  EXPECT_TRUE(has(c.run(), "sync-overhead"));
  c.kernel.metrics.erase(m::warp_latency);
  const auto d = c.run();
  EXPECT_FALSE(has(d, "latency-bound")) << "no total: not measured, no guess";
  EXPECT_FALSE(has(d, "sync-overhead"));
}

TEST(DecisionTree, OccupancyTailLaunchDivergenceAtomics) {
  Case c;
  c.kernel.metrics[m::warps_active_pct] = 40;
  EXPECT_TRUE(has(c.run(), "low-occupancy"));

  Case tail;
  tail.kernel.attributes.grid_blocks = 132 * 8 + 1;  // one wave and one block
  EXPECT_TRUE(has(tail.run(), "tail-effect"));

  Case shortk;
  shortk.kernel.metrics[m::duration] = 3000;  // 3 µs, launched often
  shortk.launches = 100;
  const auto d = shortk.run();
  EXPECT_TRUE(has(d, "launch-overhead"));
  EXPECT_EQ(d.verdict, "launch-bound");

  Case div;
  div.kernel.metrics[m::threads_per_inst] = 16;
  EXPECT_TRUE(has(div.run(), "warp-divergence"));

  Case atom;
  atom.kernel.metrics[m::red_requests] = 16e6;  // 16 atomics per load request
  EXPECT_EQ(atom.run().findings.at(0).id, "atomic-contention");
}

TEST(DecisionTree, LowOccupancyIsTheCauseOfWaiting) {
  Case c;
  c.kernel.metrics[m::stall_long_scoreboard] = 18;  // 90% of 20: latency-bound
  EXPECT_EQ(c.run().findings.at(0).id, "latency-bound") << "occupancy 90%: more ILP, not warps";
  c.kernel.metrics[m::warps_active_pct] = 45;  // latency scores 0.94, low occupancy 0.73...
  const auto d = c.run();
  EXPECT_EQ(d.findings.at(0).id, "low-occupancy") << "...but too few warps is the cause";
  EXPECT_EQ(d.findings.at(1).id, "latency-bound");
}

TEST(DecisionTree, UncoalescedAccessIsACauseOfWaiting) {
  Case c;
  c.kernel.metrics[m::stall_long_scoreboard] = 19;  // 95% of 20: latency-bound scores 0.97
  c.kernel.metrics[m::gst_sectors] = 12e6;          // over-fetch 2: uncoalesced, scores lower
  const auto d = c.run();
  ASSERT_TRUE(has(d, "latency-bound"));
  EXPECT_EQ(d.findings.at(0).id, "uncoalesced-global") << "the sectors each wait is for";
}

TEST(DecisionTree, LocalTrafficIsWeighedAgainstWhatTmaMovesToo) {
  Case c;
  // A TMA-fed kernel: no LSU global traffic, 2.4 GB through L2, 2.8 MB of local bytes and a few
  // hundred atomics (cuBLAS's TF32 GEMM on the H200).
  c.kernel.metrics[m::gld_sectors] = 0;
  c.kernel.metrics[m::gld_requests] = 0;
  c.kernel.metrics[m::gst_sectors] = 1;
  c.kernel.metrics[m::gst_requests] = 1;
  c.kernel.metrics[m::local_ld_bytes] = 1.8e6;
  c.kernel.metrics[m::local_st_bytes] = 1.0e6;
  c.kernel.metrics[m::atom_requests] = 190;
  EXPECT_TRUE(has(c.run(), "local-memory")) << "without the L2 count, the LSU's bytes alone";
  EXPECT_TRUE(has(c.run(), "atomic-contention"));
  c.kernel.metrics[m::l2_bytes] = 2.4e9;
  const auto d = c.run();
  EXPECT_FALSE(has(d, "local-memory"));
  EXPECT_FALSE(has(d, "atomic-contention"));
  // The path shows the formula the check computed, TMA's bytes among the global traffic.
  const auto local = std::find_if(d.path.begin(), d.path.end(),
                                  [](const PathStep& s) { return s.node == "local"; });
  ASSERT_NE(local, d.path.end());
  EXPECT_EQ(local->expression, "local_bytes / (32 x (gld_sectors + gst_sectors) + tma_bytes)");
  // L2's count of an ordinary kernel (up to twice its bytes on the split L2) is no TMA traffic.
  Case spill;
  spill.kernel.metrics[m::local_st_bytes] = 100e6;
  spill.kernel.metrics[m::l2_bytes] = 2 * (32 * 8e6 + 100e6);
  EXPECT_TRUE(has(spill.run(), "local-memory"));
}

TEST(DecisionTree, StallsCostNoMoreThanTheSmHeadroom) {
  Case c;
  c.kernel.metrics[m::stall_barrier] = 10;  // 50% of 20
  const auto at = [](const Diagnosis& d, const char* id) {
    return *std::find_if(d.findings.begin(), d.findings.end(),
                         [&](const Finding& f) { return f.id == id; });
  };
  EXPECT_DOUBLE_EQ(at(c.run(), "sync-overhead").score, 0.4 + 0.6 * 0.5);
  c.kernel.metrics[m::sm_pct] = 85;  // the busiest unit leaves 15% to gain
  EXPECT_DOUBLE_EQ(at(c.run(), "sync-overhead").score, 0.4 + 0.6 * 0.15);
  c.kernel.metrics[m::sm_pct] = 95;  // 5%: under diagnosis.min_severity
  const auto d = c.run();
  EXPECT_FALSE(has(d, "sync-overhead"));
  EXPECT_EQ(d.findings.at(0).id, "compute-bound");
  // A full MIO queue may be the busiest unit's own: not capped.
  c.kernel.metrics[m::stall_barrier] = 0;
  c.kernel.metrics[m::stall_mio_throttle] = 19;
  c.kernel.metrics[m::sm_pct] = 99.9;
  EXPECT_EQ(c.run().findings.at(0).id, "mio-throttle");
}

// What only the SM's headroom bounds follows the compute roof where the kernel is at it (a
// warp-specialized GEMM's producer warps wait at barriers by design), and leads below it.
TEST(DecisionTree, AtTheComputeRoofTheRoofLeadsOverWhatItsHeadroomBounds) {
  Case c;
  c.kernel.metrics[m::stall_barrier] = 10;  // 50% of 20, capped at the headroom
  c.kernel.metrics[m::sm_pct] = 88;
  auto d = c.run();
  ASSERT_EQ(ids(d), (std::vector<std::string>{"compute-bound", "sync-overhead"}));
  EXPECT_EQ(d.verdict, "compute-bound");
  c.kernel.metrics[m::sm_pct] = 70;  // under compute_bound.at_roof_sm_pct: the barriers lead
  EXPECT_EQ(ids(c.run()), std::vector<std::string>{"sync-overhead"});
  Thresholds lower;
  lower.set("compute_bound.at_roof_sm_pct", 65);
  EXPECT_EQ(c.run(lower).findings.at(0).id, "compute-bound");
  // A problem the headroom does not bound still leads at the roof, and the roof is dropped.
  c.kernel.metrics[m::sm_pct] = 88;
  c.kernel.metrics[m::stall_mio_throttle] = 6;  // 30% of 20 with the barriers' 50%
  Thresholds mio;
  mio.set("mio.throttle_share", 0.25);
  d = c.run(mio);
  EXPECT_EQ(d.findings.at(0).id, "mio-throttle");
  EXPECT_FALSE(has(d, "compute-bound"));
}

TEST(DecisionTree, ComputeBound) {
  Case c;
  c.kernel.metrics[m::sm_pct] = 85;
  const auto d = c.run();
  EXPECT_EQ(d.verdict, "compute-bound");
  EXPECT_EQ(d.path[0].answer, "compute");
  EXPECT_TRUE(has(d, "compute-bound"));
}

TEST(DecisionTree, MissingMetricsSayNotMeasuredAndTheWalkGoesOn) {
  Case c;
  c.kernel.metrics = {{m::threads_per_inst, 8}};  // almost nothing measured
  const auto d = c.run();
  EXPECT_EQ(d.path[0].answer, "not measured");
  EXPECT_GT(d.path.size(), 5u) << "every node of the branch is still visited";
  int not_measured = 0;
  for (const auto& s : d.path) not_measured += s.answer == "not measured";
  EXPECT_GT(not_measured, 5);
  EXPECT_TRUE(has(d, "warp-divergence")) << "what was measured is still judged";
}

TEST(DecisionTree, EveryFindingIdIsInTheCatalogue) {
  for (const char* id :
       {"uncoalesced-global", "redundant-dram-traffic", "host-device-transfers", "um-page-faults",
        "memory-bound-at-roof", "memory-bound-below-roof", "latency-bound", "shared-bank-conflicts",
        "local-memory", "low-occupancy", "tail-effect", "launch-overhead", "warp-divergence",
        "atomic-contention", "sync-overhead", "compute-bound"}) {
    const auto* f = find_finding(id);
    ASSERT_NE(f, nullptr) << id;
    EXPECT_GT(std::string(f->explanation).size(), 40u) << id;
    EXPECT_GT(std::string(f->recommendation).size(), 40u) << id;
  }
}

// ---- the command --------------------------------------------------------------------------------

using test::run_cli;

TEST(DiagnoseCommand, KernelIsSelectedByLabelOrFunction) {
  for (const char* name : {"transpose_tiled", "transpose_shared<RowMajorTile>", "transpose_shared"}) {
    const auto r = run_cli({"diagnose", "--report", kTranspose, "--variant", "tiled", "--kernel", name});
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_NE(r.out.find("principal: shared-bank-conflicts"), std::string::npos) << name;
  }
}

TEST(DiagnoseCommand, AProfiledFunctionWithCommasInItsNameIsOneVariant) {
  const std::string name =
      "at::native::indexFuncLargeIndex<float, long, unsigned int, 1, 1, -2, true, "
      "at::native::ReduceAdd>";
  const auto r = run_cli({"diagnose", "--report",
                          std::string(GPULAB_FIXTURES_DIR) + "/outside/torch_ops.json", "--variant",
                          name + ",at::native::vectorized_layer_norm_kernel<float, "
                                 "float, false>"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("python3/" + name + " · verdict:"), std::string::npos) << r.out;
  // The second, under diagnosis.min_time_share, is selected and summarized.
  EXPECT_NE(r.out.find("not diagnosed (under diagnosis.min_time_share): "
                       "at::native::vectorized_layer_norm_kernel<float, float, false>"),
            std::string::npos)
      << r.out;
}

TEST(DiagnoseCommand, OfflineReportText) {
  const auto r = run_cli({"diagnose", "--report", kTranspose, "--variant", "tiled"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The heading names the kernel by its label and its function.
  EXPECT_NE(r.out.find("transpose/tiled · transpose_tiled · transpose_shared<RowMajorTile> · "
                       "verdict: latency-bound · principal: shared-bank-conflicts"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("├─ shared-banks"), std::string::npos);
  EXPECT_NE(r.out.find("1. shared-bank-conflicts [high]"), std::string::npos);
  EXPECT_EQ(r.out.find("transpose/naive"), std::string::npos) << "only the asked variant";
}

TEST(DiagnoseCommand, OfflineReportJsonCarriesThePath) {
  const auto r = run_cli({"diagnose", "--report", kTranspose, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  const auto& d = json["variants"][0]["kernels"][0]["diagnosis"];
  EXPECT_EQ(d["principal"], "uncoalesced-global");
  EXPECT_EQ(d["path"][0]["node"], "bottleneck");
  EXPECT_FALSE(d["findings"][0]["recommendation"].get<std::string>().empty());
}

TEST(DiagnoseCommand, ThresholdsAndBadInput) {
  auto r = run_cli({"diagnose", "--report", kTranspose, "--variant", "tiled", "--threshold",
                    "shared_banks.excess_per_inst=100"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("principal: shared-bank-conflicts"), std::string::npos);
  EXPECT_NE(r.out.find("thresholds overridden: shared_banks.excess_per_inst=100"),
            std::string::npos);
  r = run_cli({"diagnose", "--list-thresholds"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("memory_bound.dram_pct"), std::string::npos);
  EXPECT_EQ(run_cli({"diagnose"}).code, 2);
  EXPECT_EQ(run_cli({"diagnose", "transpose", "--report", kTranspose}).code, 2);
  EXPECT_EQ(run_cli({"diagnose", "--report", kTranspose, "--variant", "bogus"}).code, 2);
  EXPECT_EQ(run_cli({"diagnose", "--report", kTranspose, "--kernel", "bogus"}).code, 2);
  EXPECT_EQ(run_cli({"diagnose", "--report", kTranspose, "--threshold", "x=1"}).code, 2);
  EXPECT_EQ(run_cli({"diagnose", "--report", "/nonexistent.json"}).code, 2);
}

}  // namespace
}  // namespace gpulab::report
