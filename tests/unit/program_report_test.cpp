// The parent side of `gpulab profile` without a GPU: the injection's record lines read back
// (also when a kill cut the last one short), and records turned into a report.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <sstream>

#include "reports/base/errors.hpp"
#include "reports/diagnosis/occupancy_limit.hpp"
#include "reports/launch_tally.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/nvtx_filter.hpp"
#include "reports/profile_records.hpp"
#include "reports/program_report.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/render_text.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/sanitized.hpp"

namespace gpulab::report {
namespace {

constexpr const char* kSaxpy = "_Z5saxpyifPKfPf";  // void saxpy(int, float, const float*, float*)
constexpr const char* kScale = "_Z5scalePfi";      // void scale(float*, int)

RecordedLaunch launch(std::int64_t pid, std::int64_t index, const char* name, std::uint32_t corr,
                      bool profiled, double duration_ns = 0) {
  RecordedLaunch l;
  l.pid = pid;
  l.index = index;
  l.correlation_id = corr;
  l.mangled_name = name;
  l.grid[0] = 1024, l.grid[1] = 1, l.grid[2] = 1;
  l.block[0] = 256, l.block[1] = 1, l.block[2] = 1;
  l.matched = true;
  l.profiled = profiled;
  if (profiled) {
    l.passes = 3;
    l.metrics = {{metrics::name::duration, duration_ns}, {"dram__bytes_read.sum", 4.0e6}};
  }
  StaticAttributes a;
  a.registers_per_thread = 16;
  a.theoretical_occupancy = 1.0;
  l.attributes = a;
  return l;
}

RecordedKernelTime timed(std::int64_t pid, std::uint32_t corr, std::uint64_t ns) {
  return {pid, corr, 1'000'000, 1'000'000 + ns, 7};
}

std::string lines_of(const RecordSet& r) {
  std::string out;
  for (const auto& p : r.processes) out += to_line(p);
  for (const auto& l : r.launches) out += to_line(l);
  for (const auto& k : r.kernel_times) out += to_line(k);
  for (const auto& w : r.watchdogs) out += to_line(w);
  for (auto pid : r.ended) out += end_line(pid);
  return out;
}

RecordSet two_functions() {
  RecordSet r;
  r.processes.push_back({100, 1, "counters", 130001, "GH100", ""});
  // saxpy: launch 0 profiled (20 us by its counter), launches 2 and 3 timed by activity (10 us).
  r.launches = {launch(100, 0, kSaxpy, 11, true, 20'000), launch(100, 1, kScale, 12, true, 5'000),
                launch(100, 2, kSaxpy, 13, false), launch(100, 3, kSaxpy, 14, false)};
  r.kernel_times = {timed(100, 11, 99'000), timed(100, 13, 10'000), timed(100, 14, 10'000)};
  r.ended = {100};
  return r;
}

ProgramInfo program() {
  ProgramInfo p;
  p.argv = {"/opt/app/bin/solver", "--n", "3"};
  p.exit_code = 0;
  p.ended = "exited with status 0";
  p.replay = "kernel";
  p.launch_count = 2;
  return p;
}

TEST(ProfileRecords, EveryRecordSurvivesItsLine) {
  const RecordSet original = two_functions();
  std::istringstream in(lines_of(original));
  RecordSet back;
  read_records(in, back);
  ASSERT_EQ(back.launches.size(), 4u);
  EXPECT_EQ(back.launches[0].mangled_name, kSaxpy);
  EXPECT_EQ(back.launches[0].grid[0], 1024u);
  EXPECT_EQ(back.launches[0].block[0], 256u);
  EXPECT_EQ(back.launches[0].passes, 3);
  EXPECT_DOUBLE_EQ(back.launches[0].metrics.at("dram__bytes_read.sum"), 4.0e6);
  ASSERT_TRUE(back.launches[0].attributes);
  EXPECT_EQ(back.launches[0].attributes->registers_per_thread, 16);
  EXPECT_FALSE(back.launches[2].profiled);
  EXPECT_TRUE(back.launches[2].metrics.empty());
  ASSERT_EQ(back.kernel_times.size(), 3u);
  EXPECT_EQ(back.kernel_times[1].end_ns - back.kernel_times[1].start_ns, 10'000u);
  EXPECT_EQ(back.kernel_times[1].stream, 7u);
  ASSERT_EQ(back.processes.size(), 1u);
  EXPECT_EQ(back.processes[0].chip, "GH100");
  EXPECT_EQ(back.ended, std::vector<std::int64_t>{100});
  EXPECT_EQ(back.unreadable_lines, 0);
}

TEST(ProfileRecords, AProcessWrittenTwiceIsOneProcessAsItLastSaid) {
  RecordSet two;
  two.processes.push_back({100, 1, "counters", 130001, "", ""});
  two.processes.push_back({100, 1, "counters", 130001, "", "counters unavailable"});
  two.processes.push_back({101, 100, "counters", 130001, "", ""});
  std::istringstream in(lines_of(two));
  RecordSet back;
  read_records(in, back);
  ASSERT_EQ(back.processes.size(), 2u);
  EXPECT_EQ(back.processes[0].pid, 100);
  EXPECT_EQ(back.processes[0].refused, "counters unavailable");
  EXPECT_EQ(back.processes[1].pid, 101);
}

// The injection writes a profiled launch when it returns and its counters when its kernel-replay
// session closes, later in the same file.
TEST(ProfileRecords, CountersWrittenAfterTheirLaunchFillItIn) {
  RecordSet launches;
  launches.processes.push_back({100, 1, "counters", 130001, "", ""});
  RecordedLaunch first = launch(100, 0, kSaxpy, 11, true),
                 second = launch(100, 1, kSaxpy, 12, true);
  first.metrics.clear(), second.metrics.clear();
  first.passes = second.passes = 0;
  launches.launches = {first, second};
  std::string text = lines_of(launches);
  RecordedCounters c0{100, 0, 9, {{"dram__bytes_read.sum", 1.5e6}}, ""};
  RecordedCounters c1{100, 1, 9, {}, "kernel replay recorded 1 ranges for 2 launches"};
  RecordedCounters stray{100, 7, 9, {{"dram__bytes_read.sum", 1.0}}, ""};
  text += to_line(c0) + to_line(c1) + to_line(stray);
  std::istringstream in(text);
  RecordSet back;
  read_records(in, back);
  ASSERT_EQ(back.launches.size(), 2u);
  EXPECT_EQ(back.launches[0].passes, 9);
  EXPECT_DOUBLE_EQ(back.launches[0].metrics.at("dram__bytes_read.sum"), 1.5e6);
  EXPECT_TRUE(back.launches[1].metrics.empty());
  EXPECT_EQ(back.launches[1].error, "kernel replay recorded 1 ranges for 2 launches");
  EXPECT_EQ(back.orphan_counters, 1) << "counters of a launch never recorded";
}

// A counters record finds its launch at once, however many launches came before and however
// many counters name none: reading grows linearly with the records (a search over the launches
// for each counters record took 3.8 s for 40,000 orphans), and 40,000 launches with 40,000
// orphan counters read in under 0.2 s of processor time (a JSON document per line took 0.36 s).
TEST(ProfileRecords, CountersFindTheirLaunchInLinearTime) {
  const auto read_seconds = [](int n) {
    std::string text;
    for (int i = 0; i < n; ++i) {
      RecordedLaunch l;
      l.pid = 100;
      l.index = i;
      l.mangled_name = "_Z1kv";
      text += to_line(l);
    }
    for (int i = 0; i < n; ++i) text += to_line(RecordedCounters{100, n + i, 1, {}, ""});
    std::istringstream in(text);
    RecordSet back;
    // Processor time, not wall time: other tests and builds share the machine's cores.
    const std::clock_t begin = std::clock();
    read_records(in, back);
    const double seconds = static_cast<double>(std::clock() - begin) / CLOCKS_PER_SEC;
    EXPECT_EQ(back.launches.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(back.orphan_counters, n);
    return seconds;
  };
  // The quickest of three runs.
  const auto quickest = [&](int n) {
    return std::min({read_seconds(n), read_seconds(n), read_seconds(n)});
  };
  const double small = quickest(5000), large = quickest(40000);
  // Eight times the records: about eight times the time; quadratic matching made it forty times.
  EXPECT_LT(large, 16 * small + 0.05) << small << " s for 5k, " << large << " s for 40k";
  if (!test::kSanitized) EXPECT_LT(large, 0.2) << "s for 40k launches and 40k orphan counters";
}

TEST(ProfileRecords, ALineCutShortByAKillIsCountedAndTheRestKept) {
  std::string text = lines_of(two_functions());
  text += R"({"record":"launch","pid":100,"index":4,"name":"_Z5sa)";  // no newline: killed here
  std::istringstream in(text + "\nnot json at all\n{\"record\":\"mystery\",\"pid\":1}\n");
  RecordSet back;
  read_records(in, back);
  EXPECT_EQ(back.launches.size(), 4u);
  EXPECT_EQ(back.unreadable_lines, 3);
}

TEST(ProfileRecords, InjectionConfigRoundTripsAndNamesABadField) {
  InjectionConfig c;
  c.kernel_filter = "gemm|softmax";
  c.launch_skip = 5;
  c.launch_count = 50;
  c.metrics = {"dram__bytes_read.sum"};
  c.replay = ReplayMode::batch;
  c.watchdog_seconds = 30;
  c.output_dir = "/tmp/x";
  c.nvtx_include = {"train/", "D@a,b"};
  c.nvtx_exclude = {"warmup]"};
  c.profiler_api_range = true;
  const InjectionConfig back = injection_config_from_json(to_json_text(c));
  EXPECT_EQ(back.nvtx_include, c.nvtx_include);
  EXPECT_EQ(back.nvtx_exclude, c.nvtx_exclude);
  EXPECT_TRUE(back.profiler_api_range);
  EXPECT_EQ(back.replay, ReplayMode::batch);
  EXPECT_EQ(back.kernel_filter, c.kernel_filter);
  EXPECT_EQ(back.launch_skip, 5);
  EXPECT_EQ(back.launch_count, 50);
  EXPECT_EQ(back.metrics, c.metrics);
  EXPECT_EQ(back.watchdog_seconds, 30);
  EXPECT_EQ(back.output_dir, "/tmp/x");
  try {
    injection_config_from_json(R"({"mode":"counters","replay":"user","output_dir":"/tmp"})");
    FAIL() << "replay 'user' accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("replay"), std::string::npos) << e.what();
  }
  EXPECT_THROW(injection_config_from_json("{"), UsageError);
  EXPECT_THROW(injection_config_from_json(R"({"mode":"counters"})"), UsageError) << "no folder";
}

TEST(ProgramReport, EachFunctionSaysHowItsCountersWereReplayed) {
  for (const char* replay : {"kernel", "batch"}) {
    ProgramInfo p = program();
    p.replay = replay;
    const Report r = program_report(p, two_functions(), "basic");
    int functions = 0;
    for (const auto& v : r.variants) {
      if (!v.totals) continue;
      ++functions;
      EXPECT_EQ(v.counters.replay, replay) << v.name;
      EXPECT_EQ(v.counters.cache_control, "none") << v.name;
    }
    EXPECT_EQ(functions, 2);
  }
}

TEST(ProgramReport, FunctionsHeaviestFirstWithTheirShareOfKernelTime) {
  const Report r = program_report(program(), two_functions(), "basic");
  ASSERT_TRUE(r.program);
  EXPECT_EQ(r.subject(), "solver");
  EXPECT_EQ(r.program->launches, 4);
  EXPECT_EQ(r.program->profiled_launches, 2);
  // saxpy: 20 us (counter, not the activity's 99 us) + 10 + 10; scale: 5 us.
  EXPECT_NEAR(r.program->kernel_seconds, 45e-6, 1e-12);
  ASSERT_EQ(r.variants.size(), 2u);
  const Variant& saxpy = r.variants[0];
  EXPECT_EQ(saxpy.name, "saxpy");
  EXPECT_EQ(saxpy.role, Role::function);
  EXPECT_EQ(saxpy.description, "saxpy(int, float, float const*, float*)");
  ASSERT_TRUE(saxpy.totals);
  EXPECT_EQ(saxpy.totals->launches, 3);
  EXPECT_EQ(saxpy.totals->timed_launches, 3);
  EXPECT_EQ(saxpy.totals->profiled_launches, 1);
  EXPECT_NEAR(saxpy.totals->total_seconds, 40e-6, 1e-12);
  EXPECT_NEAR(saxpy.totals->share_of_gpu_time, 40.0 / 45.0, 1e-9);
  EXPECT_EQ(saxpy.timing.repeat, 3);
  EXPECT_NEAR(saxpy.timing.median, 10e-6, 1e-12);
  ASSERT_EQ(saxpy.kernels.size(), 1u) << "only the profiled launch is a kernel with counters";
  const Kernel& k = saxpy.kernels[0];
  EXPECT_EQ(k.mangled_name, kSaxpy);
  EXPECT_EQ(k.launch_index, 0);
  EXPECT_EQ(k.attributes.grid_blocks, 1024u);
  EXPECT_EQ(k.attributes.block_threads, 256);
  EXPECT_EQ(k.attributes.registers_per_thread, 16);
  EXPECT_TRUE(saxpy.counters.collected);
  EXPECT_EQ(saxpy.counters.passes, 3);
  EXPECT_EQ(saxpy.counters.cache_control, "none");
  EXPECT_EQ(r.variants[1].name, "scale");
  EXPECT_EQ(r.device.chip, "GH100");
  ASSERT_EQ(r.program->processes.size(), 1u);
  EXPECT_TRUE(r.program->processes[0].complete);
  EXPECT_TRUE(r.program->processes[0].note.empty());
  ASSERT_EQ(r.program->left_out.size(), 1u) << "launches past --launch-count";
  EXPECT_NE(r.program->left_out[0].find("2 matching launches after the first 2"), std::string::npos)
      << r.program->left_out[0];
}

// Each function's first launches and every profiled one are recorded in full; the rest are counted
// and their durations, joined by name, folded into the function's tally.
TEST(LaunchTally, RecordsEachFunctionsFirstLaunchesAndTalliesTheRest) {
  LaunchTally tally;
  std::uint32_t corr = 0;
  for (std::int64_t i = 0; i < kFullRecordsPerFunction; ++i)
    EXPECT_TRUE(tally.record_in_full(kSaxpy, true, false, ++corr));
  EXPECT_TRUE(tally.record_in_full(kScale, false, false, ++corr)) << "another function's first";
  EXPECT_FALSE(tally.record_in_full(kSaxpy, true, false, ++corr));
  const std::uint32_t counted = corr;
  EXPECT_TRUE(tally.record_in_full(kSaxpy, true, true, ++corr)) << "a profiled launch";
  EXPECT_TRUE(tally.kernel_time(1, kSaxpy, 1e-6)) << "its launch was recorded";
  EXPECT_TRUE(tally.kernel_time(1, kSaxpy, 1e-6)) << "a second record of a recorded launch";
  EXPECT_FALSE(tally.kernel_time(counted, kSaxpy, 2e-6));
  EXPECT_FALSE(tally.due());

  std::istringstream in(tally.take_lines(100));
  RecordSet back;
  read_records(in, back);
  ASSERT_EQ(back.tallies.size(), 1u) << "only the function that was counted";
  const RecordedTally& t = back.tallies.begin()->second;
  EXPECT_EQ(t.pid, 100);
  EXPECT_EQ(t.mangled_name, kSaxpy);
  EXPECT_TRUE(t.matched);
  EXPECT_EQ(t.launches, 1);
  EXPECT_EQ(t.timed_launches, 1);
  EXPECT_DOUBLE_EQ(t.total_seconds, 2e-6);
  EXPECT_EQ(tally.take_lines(100), "") << "nothing counted since";

  for (std::int64_t i = 0; i < kTallyEvery; ++i) tally.record_in_full(kSaxpy, true, false, ++corr);
  EXPECT_TRUE(tally.due());
  tally.reset();
  EXPECT_TRUE(tally.record_in_full(kSaxpy, true, false, ++corr)) << "a forked child starts over";
}

// Tallies are cumulative: the latest line of a (pid, function) holds it all, a line that counts
// less is an older one, and a negative count is not a record.
TEST(ProfileRecords, TheLatestTallyOfAFunctionHoldsItAll) {
  RecordSet back;
  RecordReader reader;
  reader.read(to_line(RecordedTally{100, kSaxpy, true, 65536, 65000, 0.5}), back);
  reader.read(to_line(RecordedTally{100, kSaxpy, true, 70000, 69000, 0.6}), back);
  reader.read(to_line(RecordedTally{100, kSaxpy, true, 10, 10, 0.1}), back);
  reader.read(to_line(RecordedTally{101, kSaxpy, true, 5, 5, 0.1}), back);
  reader.read(R"({"record":"tally","pid":100,"name":"k","launches":-3})", back);
  ASSERT_EQ(back.tallies.size(), 2u);
  EXPECT_EQ(back.tallies.at({100, kSaxpy}).launches, 70000);
  EXPECT_DOUBLE_EQ(back.tallies.at({100, kSaxpy}).total_seconds, 0.6);
  EXPECT_EQ(back.unreadable_lines, 1);
}

// Tallied launches count in the function's, the process's and the program's launches and kernel
// time, but not in the timing statistics, and the report says so.
TEST(ProgramReport, TalliedLaunchesCountInTheTotalsAndAreSaid) {
  RecordSet records = two_functions();
  records.tallies[{100, kSaxpy}] = RecordedTally{100, kSaxpy, true, 1000, 999, 0.010};
  records.tallies[{100, "_Z5otherv"}] = RecordedTally{100, "_Z5otherv", false, 7, 7, 0.001, 7};
  ProgramInfo p = program();
  p.kernel_filter = "saxpy";
  const Report r = program_report(p, records, "basic");
  const Variant& saxpy = r.variants.at(0);
  EXPECT_EQ(saxpy.name, "saxpy");
  EXPECT_EQ(saxpy.totals->launches, 1003);
  EXPECT_EQ(saxpy.totals->timed_launches, 1002);
  EXPECT_NEAR(saxpy.totals->total_seconds, 0.010 + 40e-6, 1e-12);
  EXPECT_EQ(saxpy.timing.samples.size(), 3u) << "the recorded launches' durations only";
  EXPECT_EQ(r.program->launches, 4 + 1000 + 7);
  EXPECT_EQ(r.program->processes.at(0).launches, 4 + 1000 + 7);
  const std::string left_out = ::testing::PrintToString(r.program->left_out);
  EXPECT_NE(left_out.find("1007 launches past each function's first 256 were counted"),
            std::string::npos)
      << left_out;
  EXPECT_NE(left_out.find("7 launches of 1 functions were not selected by --kernel"),
            std::string::npos)
      << left_out;
  EXPECT_NE(left_out.find("1002 matching launches after the first 2"), std::string::npos)
      << left_out;
  EXPECT_NE(left_out.find("1 launches have no duration"), std::string::npos) << left_out;
}

TEST(ProgramReport, AnAbruptEndIsSaidPerProcessAndUntimedLaunchesCounted) {
  RecordSet records = two_functions();
  records.ended.clear();            // no end record: killed, crashed or _exit
  records.kernel_times.pop_back();  // its last activity buffer never delivered
  records.unreadable_lines = 1;
  const Report r = program_report(program(), records, "basic");
  const ProcessInfo& p = r.program->processes.at(0);
  EXPECT_FALSE(p.complete);
  EXPECT_NE(p.note.find("stop before it ended normally"), std::string::npos) << p.note;
  EXPECT_EQ(r.variants[0].totals->timed_launches, 2);
  bool untimed = false, unreadable = false;
  for (const auto& line : r.program->left_out) {
    untimed = untimed || line.find("1 launches have no duration") != std::string::npos;
    unreadable = unreadable || line.find("1 record lines") != std::string::npos;
  }
  EXPECT_TRUE(untimed && unreadable) << ::testing::PrintToString(r.program->left_out);
}

TEST(ProgramReport, AProfiledLaunchWhoseCountersNeverCameIsSaidSo) {
  RecordSet records = two_functions();
  records.launches[0].metrics.clear();  // its session was still open when the process died
  records.orphan_counters = 2;
  const Report r = program_report(program(), records, "basic");
  EXPECT_EQ(r.program->profiled_launches, 1);
  const Variant& saxpy = r.variants.at(0);
  EXPECT_TRUE(saxpy.kernels.empty());
  EXPECT_NE(saxpy.counters.note.find("launch 0: its counters were not read before the process"),
            std::string::npos)
      << saxpy.counters.note;
  bool orphans = false;
  for (const auto& line : r.program->left_out)
    orphans = orphans || line.find("2 counter records name no launch") != std::string::npos;
  EXPECT_TRUE(orphans) << ::testing::PrintToString(r.program->left_out);
}

TEST(ProgramReport, RefusalAndWatchdogAreTheProcesssNote) {
  RecordSet records;
  records.processes.push_back({200, 1, "counters", 130001, "", "another CUPTI client holds it"});
  records.processes.push_back({201, 200, "counters", 130001, "GH100", ""});
  records.launches = {launch(201, 0, kSaxpy, 5, true, 1000)};
  records.watchdogs.push_back({201, 0, kSaxpy, 600});
  const Report r = program_report(program(), records, "basic");
  ASSERT_EQ(r.program->processes.size(), 2u);
  EXPECT_TRUE(r.program->processes[0].refused);
  EXPECT_EQ(r.program->processes[0].note, "another CUPTI client holds it");
  EXPECT_FALSE(r.program->processes[1].refused);
  EXPECT_NE(r.program->processes[1].note.find("watchdog: launch 0 of saxpy"), std::string::npos)
      << r.program->processes[1].note;
  EXPECT_NE(r.program->processes[1].note.find("--replay none"), std::string::npos);
}

TEST(ProgramReport, FunctionsWithOneDisplayNameStayApart) {
  RecordSet records;
  // Two overloads: display names drop the parameters, so both read "scale".
  records.launches = {launch(1, 0, "_Z5scalePfi", 1, false), launch(1, 1, "_Z5scalePdi", 2, false)};
  records.kernel_times = {timed(1, 1, 2000), timed(1, 2, 1000)};
  const Report r = program_report(program(), records, "none");
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.variants[0].name, "scale");
  EXPECT_EQ(r.variants[1].name, "scale #2");
  EXPECT_FALSE(r.variants[0].counters.collected);
}

TEST(ProgramReport, ResourcesComeFromTheActivityWhereTheLaunchCouldNotAskTheDriver) {
  RecordSet records = two_functions();
  records.launches[0].attributes.reset();  // saxpy: the callback could not read its attributes
  RecordedKernelTime& activity = records.kernel_times[0];
  activity.registers_per_thread = 64;
  activity.static_shared_bytes = 4096;
  std::istringstream in(lines_of(records));
  RecordSet back;
  read_records(in, back);
  EXPECT_EQ(back.kernel_times.at(0).registers_per_thread, 64) << "the record line keeps them";

  Report r = program_report(program(), back, "basic");
  const Kernel& saxpy = r.variants.at(0).kernels.at(0);
  EXPECT_EQ(saxpy.attributes.registers_per_thread, 64);
  EXPECT_EQ(saxpy.attributes.static_shared_bytes, 4096u);
  EXPECT_EQ(saxpy.attributes.theoretical_occupancy, 0) << "not known before the device is";
  EXPECT_EQ(r.variants.at(1).kernels.at(0).attributes.registers_per_thread, 16)
      << "what the driver said is kept";

  r.device.sm_count = 132;
  r.device.max_warps_per_sm = 64;
  r.device.cc_major = 9;
  r.device.shared_per_sm_bytes = 233472;
  r.device.registers_per_sm = 65536;
  r.device.max_blocks_per_sm = 32;
  complete_occupancy(r);
  // 64 registers x 256 threads = 16 K per block: 4 blocks of 8 warps in 64 K registers.
  EXPECT_EQ(saxpy.attributes.max_active_blocks_per_sm, 4);
  EXPECT_DOUBLE_EQ(saxpy.attributes.theoretical_occupancy, 0.5);
  EXPECT_DOUBLE_EQ(r.variants.at(1).kernels.at(0).attributes.theoretical_occupancy, 1.0)
      << "a recorded occupancy is not worked out again";
}

TEST(ProgramReport, TextCutsALibraryKernelsLongNameInItsCounterColumn) {
  // cuBLAS names its kernels in extern "C": the name is the whole configuration.
  const std::string gemm =
      "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_"
      "aligna4_alignc4_execute_kernel__5x_cublas";
  RecordSet records = two_functions();
  for (auto& l : records.launches)
    if (l.mangled_name == kSaxpy) l.mangled_name = gemm;
  const std::string text = render_text(program_report(program(), records, "basic"), Style{});
  EXPECT_EQ(text.find(gemm), std::string::npos) << text;
  const auto header = text.find("counter ");
  ASSERT_NE(header, std::string::npos) << text;
  const std::string line = text.substr(header, text.find('\n', header) - header);
  EXPECT_NE(line.find("sm80_xmma_ge\u2026e_kernel__5x_cublas"), std::string::npos)
      << "the head and the tail, cut in the middle: " << line;
  EXPECT_LT(line.size(), 120u) << "a column as wide as the name pushes the others off the screen";
}

TEST(ProgramReport, SurvivesTheJsonRoundTripAndIsNotALab) {
  Report r = program_report(program(), two_functions(), "basic");
  r.device.name = "NVIDIA H200";
  const Report back = from_json(to_json(r));
  ASSERT_TRUE(back.program);
  EXPECT_EQ(back.program->argv, r.program->argv);
  EXPECT_EQ(back.program->exit_code, 0);
  EXPECT_EQ(back.program->launches, 4);
  EXPECT_EQ(back.program->left_out, r.program->left_out);
  EXPECT_EQ(back.program->processes.at(0).pid, 100);
  ASSERT_TRUE(back.variants.at(0).totals);
  EXPECT_NEAR(back.variants[0].totals->share_of_gpu_time, 40.0 / 45.0, 1e-9);
  EXPECT_EQ(back.variants[0].role, Role::function);
  EXPECT_FALSE(to_json(r).contains("lab")) << "a program's report has no lab";
  EXPECT_EQ(to_json(r).at("schema"), kSchema);
  auto both = to_json(r);
  both["lab"] = {{"name", "transpose"}};
  EXPECT_THROW(from_json(both), UsageError);
}

// The NVTX ranges around each launch travel in its record; the report counts each launch, with
// its GPU time, for its range path and each of the path's parents (nsys's NVTX GPU projection).
TEST(ProgramReport, LaunchesAreGroupedByTheirNvtxRangePath) {
  RecordSet recorded = two_functions();
  recorded.launches[0].nvtx = {"train", "step", "forward"};      // saxpy, profiled: 20 us
  recorded.launches[1].nvtx = {"train", "step", "Domain B@io"};  // scale, profiled: 5 us
  recorded.launches[2].nvtx = {"train", "a/b\\c"};               // saxpy: 10 us
  // launch 3 (saxpy, 10 us) is outside every range.
  RecordSet records;
  std::istringstream in(lines_of(recorded));
  read_records(in, records);
  ASSERT_EQ(records.launches.at(0).nvtx, recorded.launches[0].nvtx) << "the record keeps them";
  ASSERT_EQ(records.launches.at(2).nvtx, recorded.launches[2].nvtx);
  EXPECT_TRUE(records.launches.at(3).nvtx.empty());
  const Report r = program_report(program(), records, "basic");

  std::map<std::string, std::pair<std::int64_t, double>> ranges;
  for (const auto& range : r.program->ranges) ranges[range.path] = {range.launches, range.seconds};
  const std::map<std::string, std::pair<std::int64_t, double>> expected = {
      {"train", {3, 35e-6}},
      {"train/a\\/b\\\\c", {1, 10e-6}},
      {"train/step", {2, 25e-6}},
      {"train/step/Domain B@io", {1, 5e-6}},
      {"train/step/forward", {1, 20e-6}}};
  ASSERT_EQ(ranges.size(), expected.size()) << ::testing::PrintToString(r.program->ranges.size());
  for (const auto& [path, want] : expected) {
    ASSERT_EQ(ranges.count(path), 1u) << path;
    EXPECT_EQ(ranges[path].first, want.first) << path;
    EXPECT_NEAR(ranges[path].second, want.second, 1e-12) << path;
  }
  // A parent comes before its own ranges.
  EXPECT_EQ(r.program->ranges.front().path, "train");
  // The profiled launches carry their path, which reads back apart.
  const Variant* saxpy = r.find_variant("saxpy");
  ASSERT_NE(saxpy, nullptr);
  EXPECT_EQ(saxpy->kernels.at(0).nvtx_path, "train/step/forward");
  EXPECT_EQ(nvtx_path_parts("train/a\\/b\\\\c"), (std::vector<std::string>{"train", "a/b\\c"}));

  // The report's JSON keeps the ranges and the paths; the text shows each under its parent.
  const Report back = from_json(to_json(r));
  ASSERT_EQ(back.program->ranges.size(), r.program->ranges.size());
  EXPECT_EQ(back.program->ranges[2].path, r.program->ranges[2].path);
  EXPECT_EQ(back.program->ranges[2].launches, r.program->ranges[2].launches);
  EXPECT_EQ(back.find_variant("saxpy")->kernels.at(0).nvtx_path, "train/step/forward");
  const std::string text = render_text(r, Style{});
  EXPECT_NE(text.find("NVTX range"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    forward "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  step "), std::string::npos) << text;
}

// Launches counted without a record of their own still say how many were outside the selection.
TEST(ProgramReport, TallyLinesKeepTheLaunchesOutsideTheSelection) {
  LaunchTally tally;
  std::uint32_t correlation = 0;
  for (int i = 0; i < kFullRecordsPerFunction; ++i)
    tally.record_in_full(kSaxpy, true, false, correlation++);
  for (int i = 0; i < 10; ++i) tally.record_in_full(kSaxpy, i % 2 == 0, false, correlation++);
  RecordSet records;
  std::istringstream in(tally.take_lines(100));
  read_records(in, records);
  ASSERT_EQ(records.tallies.size(), 1u);
  const RecordedTally& t = records.tallies.begin()->second;
  EXPECT_EQ(t.launches, 10);
  EXPECT_EQ(t.unmatched, 5);
  ProgramInfo p = program();
  p.nvtx_include = {"train/"};
  p.capture_range = "cudaProfilerApi";
  const Report r = program_report(p, records, "basic");
  const std::string left_out = ::testing::PrintToString(r.program->left_out);
  EXPECT_NE(left_out.find("5 launches of 1 functions were not selected by --nvtx-include "
                          "'train/', --capture-range cudaProfilerApi: timed, not profiled"),
            std::string::npos)
      << left_out;
}

// A traced program's NVTX ranges are a track of their own on the activities' clock: each range
// with its parents, cut to begin at the first activity, in the JSON, the Perfetto trace and the
// HTML timeline.
TEST(ProgramReport, ATracedProgramsNvtxRangesAreATrackOfTheirOwn) {
  RecordSet recorded;
  recorded.processes.push_back({100, 1, "trace", 130001, "GH100", ""});
  TraceRecord k1, k2;
  k1.activity.kind = k2.activity.kind = ActivityKind::kernel;
  k1.activity.name = k2.activity.name = kSaxpy;
  k1.activity.stream = k2.activity.stream = 7;
  k1.start = 1'000'000, k1.end = 1'010'000;
  k2.start = 1'020'000, k2.end = 1'030'000;
  std::string lines = to_line(recorded.processes[0]) + to_line(100, k1) + to_line(100, k2);
  lines += to_line(RecordedRange{100, 42, {"step"}, 990'000, 1'040'000});
  lines += to_line(RecordedRange{100, 42, {"step", "fwd"}, 1'000'000, 1'012'000});
  lines += to_line(RecordedRange{100, 42, {"warm-up"}, 900'000, 950'000});  // before any activity
  lines += end_line(100);
  RecordSet records;
  std::istringstream in(lines);
  read_records(in, records);
  ASSERT_EQ(records.ranges.size(), 3u);
  EXPECT_EQ(records.ranges[1].path, (std::vector<std::string>{"step", "fwd"}));

  const Report r = program_report(program(), records, "none");
  const Variant* timeline = r.find_variant("timeline");
  ASSERT_TRUE(timeline && timeline->timeline);
  const auto& ranges = timeline->timeline->ranges;
  ASSERT_EQ(ranges.size(), 2u) << "the warm-up ended before the first activity";
  EXPECT_EQ(ranges[0].path, "step");
  EXPECT_DOUBLE_EQ(ranges[0].start, 0) << "cut to the first activity";
  EXPECT_NEAR(ranges[0].end, 40e-6, 1e-15);
  EXPECT_EQ(ranges[1].path, "step/fwd");
  EXPECT_NEAR(ranges[1].end, 12e-6, 1e-15);
  EXPECT_EQ(ranges[1].thread, 42u);
  EXPECT_EQ(timeline->timeline->summary.kernels, 2) << "ranges are not GPU work";
  EXPECT_EQ(timeline->timeline->origin_ns, 1'000'000u) << "the first activity's start";

  const Report back = from_json(to_json(r));
  EXPECT_EQ(back.find_variant("timeline")->timeline->origin_ns, 1'000'000u);
  ASSERT_EQ(back.find_variant("timeline")->timeline->ranges.size(), 2u);
  EXPECT_EQ(back.find_variant("timeline")->timeline->ranges[1].path, "step/fwd");

  const auto trace = trace_events(r);
  int nvtx = 0;
  bool named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "nvtx") {
      ++nvtx;
      EXPECT_EQ(e["tid"], kNvtxThreadBit | 42u);
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "NVTX · thread 42")
      named = true;
  }
  EXPECT_EQ(nvtx, 2);
  EXPECT_TRUE(named);
  const std::string html = render_html({r}, HtmlPage{});
  EXPECT_NE(html.find(">NVTX 42<"), std::string::npos);
  EXPECT_NE(html.find("class=\"nvtx\""), std::string::npos);
}

}  // namespace
}  // namespace gpulab::report
