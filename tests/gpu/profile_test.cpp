// `gpulab profile` on the programs of tests/apps, on a real GPU: the records of every launch
// (names, counts, shapes), counters against the kernels' known signatures, and a report however
// the program ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "gpu/gpu_session.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/shell_command.hpp"

namespace gpulab {
namespace {

namespace m = report::metrics::name;

struct Profiled {
  int code = -1;
  std::string output;  // stdout and stderr
  std::optional<report::Report> report;
};

// gpulab profile OPTIONS --json FILE -- tests/apps/APP ARGS, killed (exit 137) past `limit_s`
// seconds: a profile that hangs fails its test instead of stopping every test after it.
Profiled profile(const std::string& options, const std::string& app, const std::string& args = "",
                 int limit_s = 120) {
  static int n = 0;
  const std::string json = ::testing::TempDir() + "/gpulab_profile_" + std::to_string(::getpid()) +
                           "_" + std::to_string(n++) + ".json";
  const std::string command = "timeout -s KILL " + std::to_string(limit_s) + " " +
                              std::string(GPULAB_BINARY) + " profile " + options + " --json " +
                              json + " -- " + GPULAB_PROFILE_APPS_DIR + "/" + app + " " + args +
                              " 2>&1";
  const auto run = test::sh(command);
  Profiled out;
  out.code = run.code;
  out.output = run.text;
  if (run.code == 128 + SIGKILL)
    out.output += "\n(killed after " + std::to_string(limit_s) + " s: gpulab profile hung)";
  try {
    out.report = report::load_report(json);
  } catch (const std::exception&) {
  }
  std::remove(json.c_str());
  return out;
}

const report::Variant* function(const report::Report& r, const std::string& name) {
  return r.find_variant(name);
}

double metric(const report::Kernel& k, const char* name) {
  const auto it = k.metrics.find(name);
  return it == k.metrics.end() ? -1 : it->second;
}

TEST(ProfileGpu, RuntimeLaunchesByFunctionWithTheirSignatures) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("", "runtime_launches");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto& r = *p.report;
  EXPECT_EQ(r.program->launches, 3) << p.output;
  EXPECT_EQ(r.program->profiled_launches, 3);
  const auto* saxpy = function(r, "saxpy");
  ASSERT_NE(saxpy, nullptr) << p.output;
  EXPECT_EQ(saxpy->description, "saxpy(int, float, float const*, float*)");
  ASSERT_EQ(saxpy->kernels.size(), 1u);
  const auto& k = saxpy->kernels[0];
  EXPECT_EQ(k.mangled_name, "_Z5saxpyifPKfPf");
  EXPECT_EQ(k.attributes.grid_blocks, 4096u);
  EXPECT_EQ(k.attributes.block_threads, 256);
  EXPECT_GT(k.attributes.registers_per_thread, 0);
  EXPECT_GT(k.attributes.theoretical_occupancy, 0);
  // 2^20 floats read twice (x and y) and written once: sectors and requests are exact.
  EXPECT_EQ(metric(k, m::gld_sectors), 2.0 * (1 << 20) * 4 / 32);
  EXPECT_EQ(metric(k, m::gld_requests), 2.0 * (1 << 20) / 32);
  EXPECT_EQ(metric(k, m::gst_sectors), 1.0 * (1 << 20) * 4 / 32);
  EXPECT_GT(saxpy->counters.passes, 0);
  EXPECT_NE(function(r, "scale<float>"), nullptr) << "template instances apart";
  EXPECT_NE(function(r, "scale<double>"), nullptr);
  EXPECT_GT(saxpy->totals->total_seconds, 0);
}

// --source: each profiled function's first launch carries its instructions with their lines
// (tests/apps are built with -lineinfo), per-instruction counts and stall samples, from two
// replays that leave the program its own results (it checks them: 91 if wrong). saxpy's global
// memory instructions are all on its one line of code, and per instruction they add up to what
// the launch's counters say: 2^20 floats read twice and written once, 32-byte sectors.
TEST(ProfileGpu, SourceGivesEachFunctionItsLinesAndCounts) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--source --diagnose --launch-count all", "runtime_launches");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto& r = *p.report;
  for (const auto& line : r.program->left_out)
    EXPECT_EQ(line.find("per-instruction"), std::string::npos) << line;
  for (const char* name : {"saxpy", "scale<float>", "scale<double>"}) {
    const auto* v = function(r, name);
    ASSERT_NE(v, nullptr) << name << "\n" << p.output;
    ASSERT_FALSE(v->kernels.empty()) << name;
    const auto& source = v->kernels[0].source;
    ASSERT_TRUE(source) << name << "\n" << p.output;
    EXPECT_TRUE(source->has_lines()) << name;
    for (const auto& note : source->notes)
      for (const char* failed : {"not collected", "not taken", "no source lines"})
        EXPECT_EQ(note.find(failed), std::string::npos) << name << ": " << note;
    ASSERT_TRUE(source->sampling) << name;
    EXPECT_GT(source->sampling->samples, 0u) << name;
  }
  const report::Kernel& saxpy = function(r, "saxpy")->kernels[0];
  double sectors = 0, sectors_on_its_line = 0;
  for (const auto& i : saxpy.source->instructions) {
    const auto it = i.counters.find(report::source_counter::global_sectors);
    if (it == i.counters.end()) continue;
    sectors += it->second;
    if (i.where && i.where->line == 10 &&
        i.where->file.find("runtime_launches.cu") != std::string::npos)
      sectors_on_its_line += it->second;
  }
  EXPECT_EQ(sectors, 3.0 * (1 << 20) * 4 / 32);
  EXPECT_EQ(sectors_on_its_line, sectors) << "every global access is on line 10";
  EXPECT_EQ(sectors, metric(saxpy, m::gld_sectors) + metric(saxpy, m::gst_sectors));
}

TEST(ProfileGpu, DriverApiLaunchIsRecorded) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("", "driver_launch");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto* fill = function(*p.report, "fill");
  ASSERT_NE(fill, nullptr) << p.output;
  ASSERT_EQ(fill->kernels.size(), 1u);
  EXPECT_EQ(fill->kernels[0].attributes.grid_blocks, 32u);
  EXPECT_EQ(metric(fill->kernels[0], m::gst_sectors), 4096.0 * 4 / 32);
}

TEST(ProfileGpu, LaunchCountProfilesTheFirstAndTimesTheRest) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("", "many_kernels");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto* inc = function(*p.report, "increment");
  ASSERT_NE(inc, nullptr);
  EXPECT_EQ(inc->totals->launches, 200);
  EXPECT_EQ(inc->totals->profiled_launches, 100) << "the default --launch-count";
  EXPECT_EQ(inc->totals->timed_launches, 200) << "every launch has a duration";
  ASSERT_EQ(inc->kernels.size(), 100u);
  // The 100 are read in kernel-replay sessions of several launches each: every launch of the
  // same work must come back with the same instruction count, in its own place.
  for (const auto& k : inc->kernels) {
    EXPECT_GT(metric(k, m::inst_executed), 0) << "launch " << k.launch_index;
    EXPECT_EQ(metric(k, m::inst_executed), metric(inc->kernels.front(), m::inst_executed))
        << "launch " << k.launch_index;
  }
  for (std::size_t i = 0; i < inc->kernels.size(); ++i)
    EXPECT_EQ(inc->kernels[i].launch_index, static_cast<std::int64_t>(i));
  ASSERT_FALSE(p.report->program->left_out.empty());

  const auto skip = profile("--launch-skip 10 --launch-count 5", "many_kernels");
  ASSERT_TRUE(skip.report) << skip.output;
  const auto* some = function(*skip.report, "increment");
  ASSERT_NE(some, nullptr);
  ASSERT_EQ(some->kernels.size(), 5u);
  EXPECT_EQ(some->kernels.front().launch_index, 10);
}

// Batch replay must read what kernel replay reads: the same work, the same counts, launch by
// launch, for every way of launching the test programs have (runtime, driver, templates, two
// streams with copies between, a program that exits from inside, 200 launches in sessions).
TEST(ProfileGpu, BatchReplayCountsWhatKernelReplayCounts) {
  GPULAB_REQUIRE_GPU();
  const char* exact[] = {m::inst_executed, m::gld_sectors, m::gld_requests, m::gst_sectors,
                         m::gst_requests};
  const std::pair<const char*, const char*> programs[] = {
      {"runtime_launches", ""}, {"driver_launch", ""}, {"streams_copies", ""},
      {"ends_early", "exit 3"}, {"many_kernels", ""}};
  for (const auto& [app, args] : programs) {
    SCOPED_TRACE(app);
    const auto kernel = profile("--metrics basic --launch-count all", app, args);
    const auto batch = profile("--replay batch --metrics basic --launch-count all", app, args);
    ASSERT_TRUE(kernel.report && batch.report) << kernel.output << batch.output;
    EXPECT_EQ(batch.code, kernel.code) << batch.output;
    EXPECT_EQ(batch.report->program->replay, "batch");
    EXPECT_EQ(batch.report->program->profiled_launches, kernel.report->program->profiled_launches)
        << batch.output;
    EXPECT_GT(batch.report->program->profiled_launches, 0);
    for (const auto& kv : kernel.report->variants) {
      if (!kv.totals) continue;  // the timeline
      const auto* bv = function(*batch.report, kv.name);
      ASSERT_NE(bv, nullptr) << kv.name;
      ASSERT_EQ(bv->kernels.size(), kv.kernels.size()) << kv.name;
      EXPECT_EQ(bv->counters.replay, "batch");
      EXPECT_EQ(bv->totals->timed_launches, kv.totals->timed_launches) << kv.name;
      for (std::size_t i = 0; i < kv.kernels.size(); ++i) {
        EXPECT_EQ(bv->kernels[i].launch_index, kv.kernels[i].launch_index);
        for (const char* name : exact)
          EXPECT_EQ(metric(bv->kernels[i], name), metric(kv.kernels[i], name))
              << kv.name << " launch " << kv.kernels[i].launch_index << " " << name;
      }
    }
  }
}

// What batch replay puts back: kernels that add in place to device, managed and mapped host
// memory, and a host write to pinned memory made while a batch is open. The program checks its
// own sums (exit 91-93 when a replay leaked into them); each of its 10 launches has counters.
TEST(ProfileGpu, BatchReplayLeavesTheProgramItsOwnResults) {
  GPULAB_REQUIRE_GPU();
  for (const char* replay : {"batch", "kernel"}) {
    SCOPED_TRACE(replay);
    const auto p = profile(std::string("--replay ") + replay + " --launch-count all",
                           "memory_kinds");
    EXPECT_EQ(p.code, 0) << p.output;
    ASSERT_TRUE(p.report) << p.output;
    EXPECT_EQ(p.report->program->profiled_launches, 10) << p.output;
  }
}

TEST(ProfileGpu, KernelFilterProfilesOnlyMatchingFunctions) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--kernel 'scale<double>'", "runtime_launches");
  ASSERT_TRUE(p.report) << p.output;
  EXPECT_EQ(p.report->program->profiled_launches, 1);
  EXPECT_EQ(function(*p.report, "scale<double>")->kernels.size(), 1u);
  EXPECT_TRUE(function(*p.report, "saxpy")->kernels.empty());
  EXPECT_EQ(function(*p.report, "saxpy")->totals->timed_launches, 1) << "timed all the same";
}

TEST(ProfileGpu, TraceHasTwoStreamsOfCopiesAndKernels) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--trace", "streams_copies");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto* t = function(*p.report, "timeline");
  ASSERT_NE(t, nullptr) << p.output;
  ASSERT_TRUE(t->timeline);
  std::set<std::uint32_t> kernel_streams;
  int copies = 0;
  for (const auto& a : t->timeline->activities) {
    if (a.kind == report::ActivityKind::kernel) kernel_streams.insert(a.stream);
    if (a.kind == report::ActivityKind::copy) ++copies;
  }
  EXPECT_EQ(kernel_streams.size(), 2u);
  EXPECT_EQ(copies, 4);
  EXPECT_EQ(function(*p.report, "add_one")->totals->launches, 2);
}

TEST(ProfileGpu, ExitInsideAndCrashStillLeaveAReport) {
  GPULAB_REQUIRE_GPU();
  const auto exited = profile("", "ends_early", "exit 3");
  EXPECT_EQ(exited.code, 3) << exited.output;
  ASSERT_TRUE(exited.report) << exited.output;
  EXPECT_EQ(exited.report->program->exit_code, 3);
  EXPECT_EQ(function(*exited.report, "touch")->totals->launches, 3);
  EXPECT_TRUE(exited.report->program->processes.at(0).complete) << "exit() runs atexit";

  const auto crashed = profile("", "ends_early", "crash");
  EXPECT_EQ(crashed.code, 128 + SIGSEGV) << crashed.output;
  ASSERT_TRUE(crashed.report) << crashed.output;
  EXPECT_EQ(crashed.report->program->signal, "SIGSEGV");
  EXPECT_EQ(function(*crashed.report, "touch")->totals->profiled_launches, 3);
  EXPECT_FALSE(crashed.report->program->processes.at(0).complete);
}

TEST(ProfileGpu, ForkedProcessesKeepTheirOwnRecords) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("", "forks");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  EXPECT_EQ(p.report->program->processes.size(), 2u);
  EXPECT_EQ(function(*p.report, "in_parent")->kernels.size(), 1u);
  EXPECT_EQ(function(*p.report, "in_child")->kernels.size(), 1u);
  EXPECT_EQ(p.report->program->left_out.size(), 0u)
      << ::testing::PrintToString(p.report->program->left_out);
}

TEST(ProfileGpu, GraphKernelsAreTimedThroughTheirActivity) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--trace", "graph");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto* t = function(*p.report, "timeline");
  ASSERT_NE(t, nullptr);
  int kernels = 0;
  for (const auto& a : t->timeline->activities) kernels += a.kind == report::ActivityKind::kernel;
  EXPECT_EQ(kernels, 6) << "two kernels, three graph launches";
}

TEST(ProfileGpu, SpinWaitNeedsReplayNoneAndTheWatchdogNamesTheKernel) {
  GPULAB_REQUIRE_GPU();
  const auto stuck = profile("--kernel-timeout 5", "spin_wait", "", 60);
  EXPECT_EQ(stuck.code, 124) << stuck.output;
  EXPECT_NE(stuck.output.find("wait_for_flag"), std::string::npos) << stuck.output;
  ASSERT_TRUE(stuck.report) << stuck.output;
  EXPECT_NE(stuck.report->program->processes.at(0).note.find("watchdog"), std::string::npos);

  const auto free_running = profile("--replay none", "spin_wait", "", 60);
  EXPECT_EQ(free_running.code, 0) << free_running.output;
  ASSERT_TRUE(free_running.report);
  EXPECT_EQ(free_running.report->program->profiled_launches, 0);
  EXPECT_EQ(function(*free_running.report, "wait_for_flag")->totals->timed_launches, 1);
}

// The profiled launches of each function of a report, by function name.
std::map<std::string, std::int64_t> profiled_by_function(const report::Report& r) {
  std::map<std::string, std::int64_t> out;
  for (const auto& v : r.variants)
    if (v.totals && v.totals->profiled_launches > 0) out[v.name] = v.totals->profiled_launches;
  return out;
}

// tests/apps/nvtx_ranges: each expression of ncu's syntax profiles exactly the launches inside
// its ranges, the others are timed; a range pushed before the first CUDA call counts too.
TEST(ProfileGpu, NvtxExpressionsProfileExactlyTheLaunchesInsideTheirRanges) {
  GPULAB_REQUIRE_GPU();
  using Counts = std::map<std::string, std::int64_t>;
  const std::pair<std::string, Counts> cases[] = {
      {"--nvtx-include forward/", {{"forward", 3}}},
      {"--nvtx-include '[setup'", {{"fill", 1}}},
      {"--nvtx-include 'Domain B@io/'", {{"pack", 3}}},
      {"--nvtx-include epoch", {{"forward", 3}, {"backward", 3}, {"pack", 3}}},
      {"--nvtx-include 'train/*/backward]'", {{"backward", 3}}},
      {"--nvtx-include 'train/+/forward'", {{"forward", 3}}},
      {"--nvtx-include step/ --nvtx-exclude 'Domain B@io/'", {{"forward", 3}, {"backward", 3}}},
      {"--nvtx-exclude train/", {{"fill", 1}, {"tail", 1}}},
  };
  for (const auto& [options, expected] : cases) {
    const auto p = profile("--replay kernel --metrics basic " + options, "nvtx_ranges");
    ASSERT_EQ(p.code, 0) << options << "\n" << p.output;
    ASSERT_TRUE(p.report) << options << "\n" << p.output;
    EXPECT_EQ(p.report->program->launches, 11) << options;
    EXPECT_EQ(profiled_by_function(*p.report), expected) << options << "\n" << p.output;
  }
}

// Every launch is in the range paths of the report, filter or not: the GPU time inside each.
TEST(ProfileGpu, NvtxRangesGroupTheLaunchesByPath) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--replay none", "nvtx_ranges");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  std::map<std::string, std::int64_t> launches;
  for (const auto& r : p.report->program->ranges) {
    launches[r.path] = r.launches;
    EXPECT_GT(r.seconds, 0) << r.path;
  }
  const std::map<std::string, std::int64_t> expected = {{"setup", 1},
                                                        {"epoch", 9},
                                                        {"epoch/train", 9},
                                                        {"epoch/train/step", 9},
                                                        {"epoch/train/step/forward", 3},
                                                        {"epoch/train/step/backward", 3},
                                                        {"epoch/train/step/Domain B@io", 3}};
  EXPECT_EQ(launches, expected) << p.output;
}

// A traced run keeps each NVTX range as a span of its own, with its parents, beside the GPU's
// activities.
TEST(ProfileGpu, TracedNvtxRangesAreSpansWithTheirParents) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--trace", "nvtx_ranges");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  const auto* timeline = function(*p.report, "timeline");
  ASSERT_TRUE(timeline && timeline->timeline) << p.output;
  std::map<std::string, int> spans;
  for (const auto& s : timeline->timeline->ranges) {
    ++spans[s.path];
    EXPECT_GE(s.end, s.start) << s.path;
  }
  const std::map<std::string, int> expected = {{"setup", 1},
                                               {"epoch", 1},
                                               {"epoch/train", 1},
                                               {"epoch/train/step", 3},
                                               {"epoch/train/step/forward", 3},
                                               {"epoch/train/step/backward", 3},
                                               {"epoch/train/step/Domain B@io", 3}};
  EXPECT_EQ(spans, expected) << p.output;
  EXPECT_EQ(timeline->timeline->summary.kernels, 11);
}

// tests/apps/profiler_range: only the launches between cudaProfilerStart and Stop.
TEST(ProfileGpu, CaptureRangeProfilesOnlyBetweenProfilerStartAndStop) {
  GPULAB_REQUIRE_GPU();
  const auto p = profile("--capture-range cudaProfilerApi", "profiler_range");
  ASSERT_EQ(p.code, 0) << p.output;
  ASSERT_TRUE(p.report) << p.output;
  EXPECT_EQ(p.report->program->launches, 7);
  EXPECT_EQ(profiled_by_function(*p.report), (std::map<std::string, std::int64_t>{{"inside", 3}}))
      << p.output;
  const auto whole = profile("", "profiler_range");
  ASSERT_TRUE(whole.report) << whole.output;
  EXPECT_EQ(whole.report->program->profiled_launches, 7) << "without it, every launch";
}

}  // namespace
}  // namespace gpulab
