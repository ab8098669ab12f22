// The diagnosis on kernels it was not written for: the guards against false alarms (a 1-thread
// block is no divergent warp, a grid of one block no tail, a single 2 µs kernel no launch
// overhead), the occupancy limiter, the weighing of kernels by their share of the GPU time, and
// the three findings shown per kernel. On the H200 fixtures where they hold such kernels, and on
// counter values picked to sit on either side of a rule (not measurements).
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/occupancy_limit.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/run_cli.hpp"

namespace gpulab::report {
namespace {

namespace m = metrics::name;

std::string fixture(const std::string& lab) {
  return std::string(GPULAB_FIXTURES_DIR) + "/labs/" + lab + ".json";
}

Report diagnosed(const std::string& path, const Thresholds& t = {}, const KernelAsked& asked = {}) {
  Report r = load_report(path);
  derive_all(r);
  diagnose_report(r, t, asked);
  return r;
}

const Kernel& kernel_named(const Variant& v, const std::string& name) {
  const auto it = std::find_if(v.kernels.begin(), v.kernels.end(),
                               [&](const Kernel& k) { return k.name == name; });
  EXPECT_NE(it, v.kernels.end()) << name;
  return *it;
}

bool has(const Diagnosis& d, const std::string& id) {
  return std::any_of(d.findings.begin(), d.findings.end(),
                     [&](const Finding& f) { return f.id == id; });
}

// ---- the time share, on the atomics lab: a 1.9 µs helper beside a 24.6 ms kernel ---------------

TEST(DiagnosisShare, AHelperKernelIsSummarizedAndTheVariantSpeaksThroughTheHeavyOne) {
  const Report r = diagnosed(fixture("atomics"));
  const Variant& v = *r.find_variant("global-atomic");
  EXPECT_FALSE(kernel_named(v, "reset_counter").diagnosis) << "0.008% of the time";
  ASSERT_TRUE(kernel_named(v, "count_global_atomic").diagnosis);
  const Principal p = variant_principal(v);
  EXPECT_EQ(p.finding, "atomic-contention");
  EXPECT_EQ(p.where, "count_global_atomic");
  EXPECT_GT(p.share, 0.999);
  const Undiagnosed u = undiagnosed_kernels(v);
  EXPECT_EQ(u.functions, 1);
  EXPECT_EQ(u.names, std::vector<std::string>{"reset_counter"});
  EXPECT_LT(u.share, 0.001);
}

TEST(DiagnosisShare, AskingForAKernelDiagnosesItWhateverItsShare) {
  const Report r =
      diagnosed(fixture("atomics"), {}, [](const Kernel& k) { return k.name == "reset_counter"; });
  const auto& d = kernel_named(*r.find_variant("global-atomic"), "reset_counter").diagnosis;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->verdict, "too-little-work") << "one 1.9 µs launch per run";
  EXPECT_TRUE(d->findings.empty());
}

TEST(DiagnosisShare, TheShareThresholdIsAThreshold) {
  Thresholds t;
  t.set("diagnosis.min_time_share", 0);
  const Report r = diagnosed(fixture("atomics"), t);
  EXPECT_TRUE(kernel_named(*r.find_variant("global-atomic"), "reset_counter").diagnosis);
  EXPECT_EQ(principal_finding(*r.find_variant("global-atomic")), "atomic-contention");
}

TEST(DiagnosisShare, FunctionShareSumsTheLaunchesOfOneFunction) {
  Variant v;
  for (double ns : {10.0, 30.0, 60.0}) {
    Kernel& k = v.kernels.emplace_back();
    k.name = ns == 60.0 ? "big" : "small";
    k.metrics[m::duration] = ns;
  }
  EXPECT_DOUBLE_EQ(*function_share(v, v.kernels[0]), 0.4);
  EXPECT_DOUBLE_EQ(*function_share(v, v.kernels[2]), 0.6);
  v.kernels[2].metrics.clear();
  EXPECT_FALSE(function_share(v, v.kernels[2])) << "no duration, no share";
}

// A score-weighted finding of its own for each candidate, to test the weighing rule alone.
Variant variant_with(const std::string& name,
                     const std::vector<std::pair<std::string, double>>& kernels,
                     const std::vector<double>& durations) {
  Variant v;
  v.name = name;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    Kernel& k = v.kernels.emplace_back();
    k.name = name + std::to_string(i);
    k.metrics[m::duration] = durations[i];
    Finding f;
    f.id = kernels[i].first;
    f.score = kernels[i].second;
    k.diagnosis.emplace().findings.push_back(f);
  }
  return v;
}

TEST(DiagnosisShare, ThePrincipalIsTheHighestScoreTimesShare) {
  // At the roof on 95% of the time (0.30 x 0.95) beats a severe problem on 5% (1.0 x 0.05)...
  Variant v =
      variant_with("v", {{"memory-bound-at-roof", 0.3}, {"uncoalesced-global", 1.0}}, {95, 5});
  EXPECT_EQ(variant_principal(v).finding, "memory-bound-at-roof");
  // ...and loses to one on 40% (1.0 x 0.40 against 0.30 x 0.60).
  v = variant_with("v", {{"memory-bound-at-roof", 0.3}, {"uncoalesced-global", 1.0}}, {60, 40});
  EXPECT_EQ(variant_principal(v).finding, "uncoalesced-global");
  EXPECT_DOUBLE_EQ(variant_principal(v).share, 0.4);
}

TEST(DiagnosisShare, AProgramWeighsItsFunctionsByTheirShareOfItsTime) {
  Report program;
  program.program.emplace();
  program.variants.push_back(variant_with("gemm", {{"compute-bound", 0.35}}, {1}));
  program.variants.push_back(variant_with("copy", {{"uncoalesced-global", 0.9}}, {1}));
  program.variants[0].totals.emplace().share_of_gpu_time = 0.8;
  program.variants[1].totals.emplace().share_of_gpu_time = 0.2;
  EXPECT_EQ(program_principal(program).finding, "compute-bound");  // 0.28 against 0.18
  EXPECT_EQ(program_principal(program).where, "gemm");
  program.variants[0].totals->share_of_gpu_time = 0.4;
  program.variants[1].totals->share_of_gpu_time = 0.6;
  EXPECT_EQ(program_principal(program).finding, "uncoalesced-global");  // 0.54 against 0.14
}

// Each top-level NVTX range of a program has a principal of its own: there, of the functions
// launched inside it, weighed by their share of the range's profiled time.
TEST(DiagnosisShare, EachTopLevelNvtxRangeHasAPrincipalOfItsOwn) {
  Report program;
  program.program.emplace().argv = {"train.py"};
  program.program->ranges = {{"load", 1, 1}, {"train", 3, 9}, {"train/step", 3, 9}};
  program.variants.push_back(variant_with("copy", {{"uncoalesced-global", 0.9}}, {1}));
  program.variants.push_back(
      variant_with("gemm", {{"compute-bound", 0.35}, {"compute-bound", 0.35}}, {4, 4}));
  program.variants.push_back(variant_with("norm", {{"uncoalesced-global", 0.9}}, {1}));
  program.variants[0].totals.emplace().share_of_gpu_time = 0.1;
  program.variants[1].totals.emplace().share_of_gpu_time = 0.8;
  program.variants[2].totals.emplace().share_of_gpu_time = 0.1;
  program.variants[0].kernels[0].nvtx_path = "load";
  program.variants[1].kernels[0].nvtx_path = "train/step";
  program.variants[1].kernels[1].nvtx_path = "train/step";
  program.variants[2].kernels[0].nvtx_path = "train";
  const auto principals = range_principals(program);
  ASSERT_EQ(principals.size(), 2u) << "top-level ranges only";
  EXPECT_EQ(principals[0].range, "load");
  EXPECT_EQ(principals[0].principal.finding, "uncoalesced-global");
  EXPECT_EQ(principals[0].principal.where, "copy");
  EXPECT_DOUBLE_EQ(principals[0].principal.share, 1.0);
  // In train: gemm's 8 of 9 profiled units (0.35 x 8/9 = 0.31) beats norm's 1 (0.9 x 1/9 = 0.1).
  EXPECT_EQ(principals[1].range, "train");
  EXPECT_EQ(principals[1].principal.finding, "compute-bound");
  EXPECT_DOUBLE_EQ(principals[1].principal.share, 8.0 / 9.0);
  const auto json = to_json(program)["program"];
  ASSERT_EQ(json["range_principals"].size(), 2u);
  EXPECT_EQ(json["range_principals"][1]["range"], "train");
  EXPECT_EQ(json["range_principals"][1]["where"], "gemm");
  const std::string text = render_diagnosis(program);
  EXPECT_NE(text.find("  in NVTX range train: compute-bound (gemm), 88.9% of the range's "
                      "profiled GPU time\n"),
            std::string::npos)
      << text;
}

// ---- the guards, on fixtures: kernels of one thread, one block, one short launch ----------------

TEST(DiagnosisGuards, AOneThreadKernelIsTooLittleWorkNotDivergentNorATail) {
  // reduction/warp-shuffle's zero_result: one thread, 1.9 µs, 2.8% of the variant: diagnosed.
  const Report r = diagnosed(fixture("reduction"));
  const auto& d = kernel_named(*r.find_variant("warp-shuffle"), "zero_result").diagnosis;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->verdict, "too-little-work");
  EXPECT_TRUE(d->findings.empty());
  EXPECT_EQ(principal_finding(*r.find_variant("warp-shuffle")), "memory-bound-at-roof");
}

TEST(DiagnosisGuards, AOneBlockGridHasNoTailAndItsOccupancyLimitIsTheGrid) {
  // reduction/interleaved's reduce_finish: one block of 1024 threads for 11 µs.
  const Report r = diagnosed(fixture("reduction"));
  const auto& d = kernel_named(*r.find_variant("interleaved"), "reduce_finish").diagnosis;
  ASSERT_TRUE(d);
  EXPECT_FALSE(has(*d, "tail-effect")) << "a grid of one block is small, not a partial wave";
  ASSERT_TRUE(has(*d, "low-occupancy"));
  const auto& low = *std::find_if(d->findings.begin(), d->findings.end(),
                                  [](const Finding& f) { return f.id == "low-occupancy"; });
  EXPECT_NE(low.detail.find("grid: 1 block for 132 SMs"), std::string::npos) << low.detail;
  // The variant speaks through reduce_interleaved (96% of its time), not the small kernel.
  EXPECT_EQ(principal_finding(*r.find_variant("interleaved")), "sync-overhead");
}

TEST(DiagnosisGuards, OccupancyFindingsNameTheirLimiter) {
  const Report r = diagnosed(fixture("occupancy"));
  const auto detail = [&](const std::string& variant) {
    const auto& d = *r.find_variant(variant)->kernels.at(0).diagnosis;
    for (const auto& f : d.findings)
      if (f.id == "low-occupancy") return f.detail;
    return std::string("(no low-occupancy finding)");
  };
  EXPECT_NE(detail("block-32").find("at most 32 blocks resident"), std::string::npos)
      << detail("block-32");
  EXPECT_NE(detail("smem-limited").find("shared memory"), std::string::npos)
      << detail("smem-limited");
}

// ---- near the memory balance, on the labs recorded on both cards (docs/cards.md) ---------------

bool has_caveat(const Variant& v, const std::string& words) {
  for (const auto& k : v.kernels)
    if (k.diagnosis)
      for (const auto& c : k.diagnosis->caveats)
        if (c.find(words) != std::string::npos) return true;
  return false;
}

TEST(DiagnosisBalance, AKernelThatTheLeanerCardMakesMemoryBoundSaysSo) {
  // occupancy/block-256: latency-bound at about half the H200's DRAM peak, memory-bound at over
  // two thirds of the H100's (the recorded fixtures).
  const Report h200 = diagnosed(fixture("occupancy"));
  const Variant& v = *h200.find_variant("block-256");
  EXPECT_EQ(v.kernels.at(0).diagnosis->verdict, "latency-bound");
  ASSERT_EQ(v.kernels.at(0).diagnosis->caveats.size(), 1u);
  const std::string& caveat = v.kernels.at(0).diagnosis->caveats.front();
  EXPECT_NE(caveat.find("near the memory balance: DRAM at 53.8% of this card's peak"),
            std::string::npos)
      << caveat;
  EXPECT_NE(caveat.find("up to 77% of an H100 80GB HBM3's 3352 GB/s"), std::string::npos) << caveat;
  // On the H100 itself, the leanest card, and on a memory-bound kernel: nothing to say.
  const Report h100 = diagnosed(std::string(GPULAB_FIXTURES_DIR) + "/labs-h100/occupancy.json");
  EXPECT_FALSE(has_caveat(*h100.find_variant("block-256"), "memory balance"));
  EXPECT_FALSE(has_caveat(*diagnosed(fixture("transpose")).find_variant("padded"), "balance"));

  // The JSON keeps it; the text says it under the verdict.
  const Report back = from_json(to_json(h200));
  EXPECT_EQ(back.find_variant("block-256")->kernels.at(0).diagnosis->caveats,
            v.kernels.at(0).diagnosis->caveats);
  EXPECT_NE(render_diagnosis(h200).find("caveat: near the memory balance"), std::string::npos);
}

// `gpulab profile` records no chip name: the compute capability stands for it.
TEST(DiagnosisBalance, AProfiledProgramWithoutAChipNameIsMatchedByItsComputeCapability) {
  Report r = load_report(std::string(GPULAB_FIXTURES_DIR) + "/outside/cub_algorithms.json");
  ASSERT_TRUE(r.device.chip.empty());
  derive_all(r);
  diagnose_report(r, Thresholds{}, [](const Kernel&) { return true; });
  int caveated = 0;
  for (const auto& v : r.variants) caveated += has_caveat(v, "memory balance");
  EXPECT_GT(caveated, 0);
  r.device.cc_minor = 9;  // another chip: no leanest card known
  diagnose_report(r, Thresholds{}, [](const Kernel&) { return true; });
  for (const auto& v : r.variants) EXPECT_FALSE(has_caveat(v, "memory balance")) << v.name;
}

// Of the labs' kernels whose verdict moved to memory-bound from the H200 to the H100, every one
// carries the caveat on the H200 (docs/cards.md lists seven).
TEST(DiagnosisBalance, EveryKernelThatMovedOnTheH100WasCaveatedOnTheH200) {
  const std::vector<std::pair<std::string, std::string>> moved = {
      {"atomics", "block-reduce"}, {"occupancy", "block-256"}, {"occupancy", "block-512"},
      {"pitched", "pitched"},      {"pitched", "unpitched"},   {"spill", "registers"},
      {"vectorize", "scalar"}};
  for (const auto& [lab, variant] : moved)
    EXPECT_TRUE(has_caveat(*diagnosed(fixture(lab)).find_variant(variant), "memory balance"))
        << lab << "/" << variant;
}

// ---- the guards, node by node
// ---------------------------------------------------------------------

struct Case {
  Kernel kernel;
  Variant variant;
  DeviceInfo device;
  std::int64_t launches = 1;
  Case() {
    device.sm_count = 132;
    device.max_warps_per_sm = 64;
    device.cc_major = 9;
    device.shared_per_sm_bytes = 233472;
    kernel.attributes = {32, 0, 0, 0, 256, 132 * 8 * 10, 8, 1.0};
    kernel.metrics = {{m::dram_pct, 30},
                      {m::sm_pct, 20},
                      {m::gld_sectors, 4e6},
                      {m::gld_requests, 1e6},
                      {m::gst_sectors, 4e6},
                      {m::gst_requests, 1e6},
                      {m::warps_active_pct, 90},
                      {m::threads_per_inst, 32},
                      {m::duration, 1e6},
                      {m::warp_latency, 20},
                      {m::stall_long_scoreboard, 2},
                      {m::stall_barrier, 1}};
  }
  Diagnosis run(const Thresholds& t = {}) {
    kernel.derived = derive(kernel, nullptr);
    return diagnose({&kernel, &variant, nullptr, &device, launches}, t);
  }
};

TEST(DiagnosisGuards, DivergenceIsJudgedAgainstTheLanesTheBlockCanHave) {
  Case one;
  one.kernel.attributes.block_threads = 1;
  one.kernel.metrics[m::threads_per_inst] = 1;
  EXPECT_FALSE(has(one.run(), "warp-divergence")) << "a 1-thread block runs 1-lane warps";
  Case sixteen;
  sixteen.kernel.attributes.block_threads = 16;
  sixteen.kernel.metrics[m::threads_per_inst] = 16;
  EXPECT_FALSE(has(sixteen.run(), "warp-divergence"));
  Case uneven;  // 48 threads: warps of 32 and 16 lanes, 24 on average
  uneven.kernel.attributes.block_threads = 48;
  uneven.kernel.metrics[m::threads_per_inst] = 24;
  EXPECT_FALSE(has(uneven.run(), "warp-divergence"));
  uneven.kernel.metrics[m::threads_per_inst] = 12;  // half of what the block allows
  EXPECT_TRUE(has(uneven.run(), "warp-divergence"));
  Case full;
  full.kernel.metrics[m::threads_per_inst] = 16;
  EXPECT_TRUE(has(full.run(), "warp-divergence")) << "16 of 32 lanes in 256-thread blocks";
}

TEST(DiagnosisGuards, ATailNeedsMoreThanOneWave) {
  Case under;
  under.kernel.attributes.grid_blocks = 132 * 8 / 2;  // half a wave
  EXPECT_FALSE(has(under.run(), "tail-effect"));
  Case over;
  over.kernel.attributes.grid_blocks = 132 * 8 + 1;  // one wave and one block
  EXPECT_TRUE(has(over.run(), "tail-effect"));
}

// A grid with fewer blocks than SMs: the achieved occupancy (over the SMs' active cycles) looks
// fine, but a quarter of the SMs have no block. The warps in use over the whole GPU are judged,
// and the finding leads the warps' waits, which more SMs at work would share out.
TEST(DiagnosisGuards, AGridWithFewerBlocksThanSmsLeadsWithOccupancy) {
  Case small;
  small.kernel.attributes.grid_blocks = 99;  // 0.75 of the 132 SMs have a block
  small.kernel.attributes.max_active_blocks_per_sm = 1;
  small.kernel.metrics[m::warps_active_pct] = 60;  // 0.6 x 0.75 = 0.45 of the GPU's slots
  small.kernel.metrics[m::stall_long_scoreboard] = 0;
  small.kernel.metrics[m::stall_mio_throttle] = 14;  // 70% of the cycles: alone, it would lead
  auto d = small.run();
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "low-occupancy");
  EXPECT_TRUE(has(d, "mio-throttle"));
  const auto& ev = d.findings.front().evidence;
  const auto gpu = std::find_if(ev.begin(), ev.end(),
                                [](const Evidence& e) { return e.metric == "gpu_occupancy"; });
  ASSERT_NE(gpu, ev.end());
  EXPECT_NEAR(*gpu->value, 0.45, 1e-9);

  Case filled = small;  // every SM has a block: 0.6 is not low, and the MIO wait leads
  filled.kernel.attributes.grid_blocks = 132;
  d = filled.run();
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().id, "mio-throttle");
  EXPECT_FALSE(has(d, "low-occupancy"));
}

TEST(DiagnosisGuards, AShortKernelIsLaunchOverheadOnlyWhenLaunchedOften) {
  Case once;
  once.kernel.metrics[m::duration] = 3000;  // 3 µs
  auto d = once.run();
  EXPECT_EQ(d.verdict, "too-little-work");
  EXPECT_TRUE(d.findings.empty());
  ASSERT_EQ(d.path.size(), 1u);
  EXPECT_EQ(d.path[0].node, "work");
  Case often = once;
  often.launches = 200;
  d = often.run();
  EXPECT_EQ(d.verdict, "launch-bound");
  EXPECT_TRUE(has(d, "launch-overhead"));
}

TEST(DiagnosisGuards, EveryFindingSaysWhatWouldMakeItFalse) {
  for (const auto& f : finding_catalogue()) EXPECT_GT(std::string(f.false_if).size(), 20u) << f.id;
  Case low;
  low.kernel.metrics[m::warps_active_pct] = 30;
  const auto d = low.run();
  ASSERT_TRUE(has(d, "low-occupancy"));
  EXPECT_NE(d.findings.front().false_if.find("occupancy.achieved"), std::string::npos);
}

// ---- the occupancy limiter
// ------------------------------------------------------------------------

DeviceInfo h200() {
  DeviceInfo d;
  d.sm_count = 132;
  d.max_warps_per_sm = 64;
  d.cc_major = 9;
  d.shared_per_sm_bytes = 233472;
  d.registers_per_sm = 65536;
  d.max_blocks_per_sm = 32;
  return d;
}

StaticAttributes launch(int threads, int registers, std::uint64_t shared, std::uint64_t grid) {
  StaticAttributes a;
  a.block_threads = threads;
  a.registers_per_thread = registers;
  a.dynamic_shared_bytes = shared;
  a.grid_blocks = grid;
  return a;
}

TEST(OccupancyLimit, NamesTheResourceThatBinds) {
  auto l = occupancy_limit(launch(256, 128, 0, 100000), h200());  // 32 K registers per block
  ASSERT_TRUE(l);
  EXPECT_EQ(l->limiter, OccupancyLimiter::registers);
  EXPECT_EQ(l->blocks_per_sm, 2);
  EXPECT_EQ(l->warps_per_sm, 16);

  l = occupancy_limit(launch(32, 16, 0, 100000), h200());  // 32 one-warp blocks: half the slots
  EXPECT_EQ(l->limiter, OccupancyLimiter::block_count);
  EXPECT_EQ(l->warps_per_sm, 32);

  l = occupancy_limit(launch(256, 16, 100 * 1024, 100000), h200());  // 101 KB each: 2 fit
  EXPECT_EQ(l->limiter, OccupancyLimiter::shared_memory);
  EXPECT_EQ(l->blocks_per_sm, 2);

  l = occupancy_limit(launch(768, 16, 0, 100000), h200());  // 24 warps: 2 blocks of 64 slots
  EXPECT_EQ(l->limiter, OccupancyLimiter::block_size);
  EXPECT_EQ(l->warps_per_sm, 48);

  l = occupancy_limit(launch(1024, 16, 0, 1), h200());
  EXPECT_EQ(l->limiter, OccupancyLimiter::grid);
  EXPECT_NEAR(l->theoretical, 32.0 / (132 * 64), 1e-12) << "32 warps on one SM of 132";
  EXPECT_NE(l->sentence.find("grid: 1 block for 132 SMs"), std::string::npos) << l->sentence;
}

TEST(OccupancyLimit, TheRuntimesCountWinsAndUnknownsSayNothing) {
  auto a = launch(256, 128, 0, 100000);
  a.max_active_blocks_per_sm = 1;  // what cudaOccupancyMaxActiveBlocksPerMultiprocessor said
  EXPECT_EQ(occupancy_limit(a, h200())->blocks_per_sm, 1);
  DeviceInfo unknown = h200();
  unknown.max_blocks_per_sm = 0;
  unknown.cc_major = 3;  // no table entry for it
  EXPECT_FALSE(occupancy_limit(a, unknown));
  EXPECT_FALSE(occupancy_limit(launch(0, 0, 0, 0), h200()))
      << "a library kernel gpulab did not launch";
}

// ---- what is shown
// ---------------------------------------------------------------------------------

Report many_findings() {
  Report r;
  r.lab.name = "lab";
  Variant& v = r.variants.emplace_back();
  v.name = "v";
  Kernel& k = v.kernels.emplace_back();
  k.name = "k";
  Diagnosis& d = k.diagnosis.emplace();
  d.verdict = "latency-bound";
  for (const char* id : {"uncoalesced-global", "local-memory", "atomic-contention",
                         "warp-divergence", "sync-overhead"}) {
    Finding f;
    f.id = id;
    f.score = 0.5;
    d.findings.push_back(f);
  }
  return r;
}

TEST(DiagnosisText, ShowsThreeFindingsAndNamesTheRest) {
  const std::string text = render_diagnosis(many_findings());
  EXPECT_NE(text.find("3. atomic-contention"), std::string::npos) << text;
  EXPECT_EQ(text.find("4. warp-divergence"), std::string::npos) << text;
  EXPECT_NE(text.find("+ 2 more: warp-divergence, sync-overhead (--all-findings shows them)"),
            std::string::npos)
      << text;
  Style all;
  all.max_findings = 0;
  EXPECT_NE(render_diagnosis(many_findings(), all).find("5. sync-overhead"), std::string::npos);
}

TEST(DiagnosisText, TheVariantPrincipalComesFirstAndTheSmallKernelsInOneLine) {
  const auto r =
      test::run_cli({"diagnose", "--report", fixture("atomics"), "--variant", "global-atomic"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("atomics/global-atomic · principal: atomic-contention (count_global_atomic, "
                       "over 99.9% of the GPU time)\n1 kernel, under 0.1% of the GPU time, not "
                       "diagnosed (under diagnosis.min_time_share): reset_counter"),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("reset_counter · verdict"), std::string::npos) << "summarized only";
  const auto asked = test::run_cli({"diagnose", "--report", fixture("atomics"), "--variant",
                                    "global-atomic", "--kernel", "reset_counter"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_NE(asked.out.find("reset_counter · verdict: too-little-work"), std::string::npos)
      << asked.out;
}

TEST(DiagnosisText, AllFindingsIsADiagnosisOption) {
  EXPECT_EQ(test::run_cli({"diagnose", "--report", fixture("atomics"), "--all-findings"}).code, 0);
  const auto r = test::run_cli({"run", "atomics", "--all-findings"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--all-findings does not apply"), std::string::npos) << r.err;
}

TEST(DiagnosisJson, TheVariantPrincipalIsInTheReport) {
  const Report r = diagnosed(fixture("atomics"));
  const auto json = to_json(r);
  const auto& v = json["variants"][0];
  EXPECT_EQ(v["principal"]["finding"], "atomic-contention");
  EXPECT_EQ(v["principal"]["where"], "count_global_atomic");
  EXPECT_EQ(to_json(from_json(json)), json) << "the principal is derived again on reading";
}

// A profiled program of two functions, the counters picked (not measured): a long uncoalesced
// copy and a function at 1% of the time, whose launches are summarized in the program's line.
TEST(DiagnosisText, AProgramSaysItsPrincipalFirstAndSummarizesItsSmallFunctions) {
  Report program;
  program.program.emplace().argv = {"/opt/bin/app"};
  program.device = h200();
  for (const auto& [name, share, sectors] :
       {std::tuple{"copy", 0.99, 32e6}, std::tuple{"tiny", 0.01, 4e6}}) {
    Variant& v = program.variants.emplace_back();
    v.name = name;
    v.role = Role::function;
    v.totals.emplace().share_of_gpu_time = share;
    v.totals->launches = 3;
    Case c;
    c.kernel.name = name;
    c.kernel.metrics[m::gst_sectors] = sectors;  // 32 sectors per store request: scattered
    v.kernels.push_back(c.kernel);
  }
  derive_all(program);
  diagnose_report(program, {});
  EXPECT_FALSE(program.variants[1].kernels[0].diagnosis) << "1% of the program's time";
  const std::string text = render_diagnosis(program);
  EXPECT_EQ(text.find("app · principal: uncoalesced-global (copy, 99.0% of the GPU time)\n"
                      "1 function, 1.0% of the GPU time, not diagnosed"),
            0u)
      << text;
  EXPECT_EQ(text.find("app/tiny"), std::string::npos) << text;
  EXPECT_EQ(to_json(program)["program"]["principal"]["where"], "copy");
}

TEST(DiagnosisText, AFunctionLaunchedSeveralTimesIsShownThroughItsLongestLaunch) {
  Report r;
  r.lab.name = "lab";
  r.device = h200();
  Variant& v = r.variants.emplace_back();
  v.name = "v";
  for (double ns : {20e3, 50e3, 30e3}) {
    Case c;
    c.kernel.name = "step";
    c.kernel.metrics[m::duration] = ns;
    v.kernels.push_back(c.kernel);
  }
  derive_all(r);
  diagnose_report(r, {});
  const auto groups = diagnosed_functions(v);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].size(), 3u);
  EXPECT_EQ(groups[0].front()->metrics.at(m::duration), 50e3) << "the longest speaks for it";
  const std::string text = render_diagnosis(r);
  EXPECT_EQ(text.find("lab/v · step · verdict"), text.rfind("lab/v · step · verdict")) << text;
  EXPECT_NE(text.find("2 more diagnosed launches of this function, principal findings: none x2"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpulab::report
