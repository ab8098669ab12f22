// A stand-in for a profiled CUDA program, for the CPU tests of `gpulab profile`: it writes, where
// the injection library would (the folder named in GPULAB_PROFILE_CONFIG), a process record and
// two launches of one kernel, as the library writes them, and then does what a test asks:
//
//   gpulab_stand_in [--ignore-int] [--ready FILE] [--sleep SECONDS] [--subfolder] [--odd-files]
//                   [--launches N [--functions K] [--counters-from REPORT [--source-from REPORT]]
//                    [--record-bytes FILE]]
//
//   --launches N   instead, N launches spread over K functions (default 3), each with its kernel
//                  time, recorded or tallied as the injection does (reports/launch_tally.hpp)
//   --counters-from REPORT  the launches are those of the report's kernels, in turn (K is their
//                  number): their functions, shapes, attributes and durations; the launches
//                  that gpulab's options profile (--launch-skip, --launch-count) get the
//                  kernel's counters of the configured metrics, as kernel replay records them,
//                  each counter and duration within 5% of the kernel's (a factor drawn per
//                  launch from a fixed seed), as repeated launches' counters vary. Reports at
//                  the scale of a job, from counters a GPU measured
//   --source-from REPORT  where gpulab asks for --source: the first profiled launch of each
//                  function gets the `source` of the report's kernel in the same place (the
//                  k-th kernel's for the k-th function), as the injection records it
//   --record-bytes FILE  then write the size of its record file into FILE
//   --ignore-int   ignore SIGINT (a program that outlives Ctrl-C)
//   --ready FILE   once the records are written, write this process's pid into FILE
//   --sleep S      then sleep S seconds (signals may end it sooner)
//   --subfolder    also leave a subfolder and a dotfile in the record folder
//   --odd-files    also leave a FIFO and a symbolic link (to a file of records) in it
//
// It exits 0. Run without gpulab (no configuration), it writes no records.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "reports/launch_tally.hpp"
#include "reports/profile_records.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace {

using namespace gpulab::report;

std::string records(std::int64_t pid) {
  RecordedProcess process{pid, static_cast<std::int64_t>(::getppid()), "counters", 130001, "", ""};
  RecordedLaunch launch;
  launch.pid = pid;
  launch.mangled_name = "_Z6kernelPf";
  launch.grid[0] = 8, launch.grid[1] = 1, launch.grid[2] = 1;
  launch.block[0] = 128, launch.block[1] = 1, launch.block[2] = 1;
  launch.matched = true;
  launch.correlation_id = 1;
  RecordedLaunch second = launch;
  second.index = 1;
  second.correlation_id = 2;
  return to_line(process) + to_line(launch) + to_line(second) +
         to_line(RecordedKernelTime{pid, 1, 1000, 3000, 7}) +
         to_line(RecordedKernelTime{pid, 2, 5000, 6000, 7});
}

// The launches the stand-in makes, in turn: from a report's kernels, or made up.
struct LaunchSource {
  std::vector<Kernel> kernels;  // empty: `functions` made-up functions, 1 us each
  std::vector<Kernel> with_sources;  // --source-from: the kernels whose `source` to record
  int functions = 3;

  int count() const { return kernels.empty() ? functions : static_cast<int>(kernels.size()); }
};

RecordedLaunch launch_of(const LaunchSource& source, std::int64_t pid, std::int64_t i) {
  RecordedLaunch launch;
  launch.pid = pid;
  launch.index = i;
  launch.correlation_id = static_cast<std::uint32_t>(i + 1);
  launch.matched = true;
  if (source.kernels.empty()) {
    launch.mangled_name = "_Z7kernel" + std::to_string(i % source.functions) + "Pf";
    launch.grid[0] = launch.block[0] = 128;
    launch.grid[1] = launch.grid[2] = launch.block[1] = launch.block[2] = 1;
    return launch;
  }
  const Kernel& k = source.kernels[i % source.kernels.size()];
  launch.mangled_name = k.mangled_name.empty() ? k.name : k.mangled_name;
  launch.attributes = k.attributes;
  launch.grid[0] = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, k.attributes.grid_blocks));
  launch.grid[1] = launch.grid[2] = launch.block[1] = launch.block[2] = 1;
  launch.block[0] = static_cast<std::uint32_t>(std::max(1, k.attributes.block_threads));
  launch.dynamic_shared_bytes = static_cast<std::uint32_t>(k.attributes.dynamic_shared_bytes);
  return launch;
}

// A factor in [0.95, 1.05], the same for the same launch and counter in every run.
double jitter(std::mt19937_64& random) {
  return 0.95 + 0.1 * std::uniform_real_distribution<double>(0, 1)(random);
}

double seconds_of(const LaunchSource& source, std::int64_t i, std::mt19937_64& random) {
  if (source.kernels.empty()) return 1e-6;
  const auto& m = source.kernels[i % source.kernels.size()].metrics;
  const auto it = m.find("gpu__time_duration.sum");
  return it != m.end() && it->second > 0 ? it->second * 1e-9 * jitter(random) : 1e-6;
}

// N launches from `source`, round robin, then the tallies and the end: what the injection writes
// for a program that launches them and returns from main.
void write_launches(std::ofstream& out, std::int64_t pid, std::int64_t n,
                    const LaunchSource& source, const InjectionConfig& config) {
  LaunchTally tally;
  std::vector<bool> source_written(static_cast<std::size_t>(source.count()), false);
  out << to_line(
      RecordedProcess{pid, static_cast<std::int64_t>(::getppid()), "counters", 130001, "", ""});
  std::uint64_t clock_ns = 0;
  std::mt19937_64 random(20261207);
  for (std::int64_t i = 0; i < n; ++i) {
    RecordedLaunch launch = launch_of(source, pid, i);
    const bool profiled =
        !source.kernels.empty() && config.replay != ReplayMode::none && i >= config.launch_skip &&
        (config.launch_count == 0 || i < config.launch_skip + config.launch_count);
    if (profiled) {
      const auto& measured = source.kernels[i % source.kernels.size()].metrics;
      launch.profiled = true;
      launch.passes = 1;
      for (const auto& name : config.metrics)
        if (auto it = measured.find(name); it != measured.end())
          launch.metrics[name] = it->second * jitter(random);
    }
    if (tally.record_in_full(launch.mangled_name, true, profiled, launch.correlation_id))
      out << to_line(launch);
    const std::size_t function = static_cast<std::size_t>(i % source.count());
    if (profiled && config.source && function < source.with_sources.size() &&
        source.with_sources[function].source && !source_written[function]) {
      source_written[function] = true;
      KernelSource recorded = *source.with_sources[function].source;
      recorded.function = launch.mangled_name;
      out << to_lines(pid, i, recorded);
    }
    const double seconds = seconds_of(source, i, random);
    const std::uint64_t start = clock_ns + 1000;
    clock_ns = start + static_cast<std::uint64_t>(seconds * 1e9);
    if (tally.kernel_time(launch.correlation_id, launch.mangled_name, seconds))
      out << to_line(RecordedKernelTime{pid, launch.correlation_id, start, clock_ns, 7});
    if (tally.due()) out << tally.take_lines(pid);
  }
  out << tally.take_lines(pid) << end_line(pid);
}

}  // namespace

int main(int argc, char** argv) {
  std::string ready;
  double sleep_seconds = 0;
  std::string record_bytes;
  std::int64_t launches = 0;
  LaunchSource source;
  bool subfolder = false, odd_files = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--ignore-int") {
      ::signal(SIGINT, SIG_IGN);
    } else if (arg == "--ready" && i + 1 < argc) {
      ready = argv[++i];
    } else if (arg == "--sleep" && i + 1 < argc) {
      sleep_seconds = std::atof(argv[++i]);
    } else if (arg == "--subfolder") {
      subfolder = true;
    } else if (arg == "--odd-files") {
      odd_files = true;
    } else if (arg == "--launches" && i + 1 < argc) {
      launches = std::atoll(argv[++i]);
    } else if (arg == "--functions" && i + 1 < argc) {
      source.functions = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--counters-from" && i + 1 < argc) {
      for (auto& v : load_report(argv[++i]).variants)
        for (auto& k : v.kernels) source.kernels.push_back(std::move(k));
      if (source.kernels.empty()) return 2;
    } else if (arg == "--source-from" && i + 1 < argc) {
      for (auto& v : load_report(argv[++i]).variants)
        for (auto& k : v.kernels) source.with_sources.push_back(std::move(k));
    } else if (arg == "--record-bytes" && i + 1 < argc) {
      record_bytes = argv[++i];
    } else {
      return 2;
    }
  }
  const std::int64_t pid = ::getpid();
  if (const char* config = std::getenv(kInjectionConfigVariable)) {
    const InjectionConfig settings = injection_config_from_json(config);
    const std::string dir = settings.output_dir;
    const std::string file = dir + "/" + std::to_string(pid) + ".jsonl";
    if (launches > 0) {
      std::ofstream out(file);
      write_launches(out, pid, launches, source, settings);
    } else {
      std::ofstream(file) << records(pid);
    }
    if (!record_bytes.empty()) {
      struct stat written {};
      ::stat(file.c_str(), &written);
      std::ofstream(record_bytes) << written.st_size << "\n";
    }
    if (odd_files) {
      ::mkfifo((dir + "/fifo.jsonl").c_str(), 0600);  // reading it would wait for a writer
      ::symlink((dir + "/" + std::to_string(pid) + ".jsonl").c_str(),
                (dir + "/link.jsonl").c_str());
    }
    if (subfolder) {
      ::mkdir((dir + "/left-behind").c_str(), 0700);
      std::ofstream(dir + "/left-behind/.hidden") << "x";
      std::ofstream(dir + "/.dotfile") << "x";
    }
  }
  if (!ready.empty()) {
    std::ofstream(ready + ".new") << pid << "\n";
    std::rename((ready + ".new").c_str(), ready.c_str());  // whole when seen
  }
  // sleep() returns early when a handled signal arrives; an ignored one does not wake it.
  for (unsigned left = static_cast<unsigned>(sleep_seconds); left > 0;) left = ::sleep(left);
  return 0;
}
