// A stand-in for a profiled CUDA program, for the CPU tests of `gpulab profile`: it writes, where
// the injection library would (the folder named in GPULAB_PROFILE_CONFIG), a process record and
// two launches of one kernel, as the library writes them, and then does what a test asks:
//
//   gpulab_stand_in [--ignore-int] [--ready FILE] [--sleep SECONDS] [--subfolder] [--odd-files]
//                   [--launches N [--functions K] [--record-bytes FILE]]
//
//   --launches N   instead, N launches spread over K functions (default 3), each with its kernel
//                  time, recorded or tallied as the injection does (reports/launch_tally.hpp)
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
#include <string>

#include "reports/launch_tally.hpp"
#include "reports/profile_records.hpp"

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

// N launches over `functions` functions, round robin, each 1 us long, then the tallies and the
// end: what the injection writes for a program that launches them and returns from main.
void write_launches(std::ofstream& out, std::int64_t pid, std::int64_t n, int functions) {
  LaunchTally tally;
  out << to_line(
      RecordedProcess{pid, static_cast<std::int64_t>(::getppid()), "counters", 130001, "", ""});
  for (std::int64_t i = 0; i < n; ++i) {
    RecordedLaunch launch;
    launch.pid = pid;
    launch.index = i;
    launch.correlation_id = static_cast<std::uint32_t>(i + 1);
    launch.mangled_name = "_Z7kernel" + std::to_string(i % functions) + "Pf";
    launch.grid[0] = launch.block[0] = 128;
    launch.grid[1] = launch.grid[2] = launch.block[1] = launch.block[2] = 1;
    launch.matched = true;
    if (tally.record_in_full(launch.mangled_name, true, false, launch.correlation_id))
      out << to_line(launch);
    const std::uint64_t start = 1000 * static_cast<std::uint64_t>(i + 1);
    if (tally.kernel_time(launch.correlation_id, launch.mangled_name, 1e-6))
      out << to_line(RecordedKernelTime{pid, launch.correlation_id, start, start + 1000, 7});
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
  int functions = 3;
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
      functions = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--record-bytes" && i + 1 < argc) {
      record_bytes = argv[++i];
    } else {
      return 2;
    }
  }
  const std::int64_t pid = ::getpid();
  if (const char* config = std::getenv(kInjectionConfigVariable)) {
    const std::string dir = injection_config_from_json(config).output_dir;
    const std::string file = dir + "/" + std::to_string(pid) + ".jsonl";
    if (launches > 0) {
      std::ofstream out(file);
      write_launches(out, pid, launches, functions);
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
