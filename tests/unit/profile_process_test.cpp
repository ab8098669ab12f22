// `gpulab profile` as a parent process, on the CPU: the program starts with the caller's signal
// dispositions and mask, signals to gpulab reach it and the report of what it did is still
// written, it dies with gpulab, the record folder goes on every way out, and a program that
// cannot run is 127 or 126 as in a shell. The program is tests/stand_in/stand_in_program.cpp,
// which writes records as the injection library does; each test works in a folder of its own
// (TMPDIR too, where gpulab makes its record folders).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "reports/launch_tally.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "unit/sanitized.hpp"
#include "unit/shell_command.hpp"
#include "unit/temp_folder.hpp"

extern char** environ;

namespace gpulab {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = GPULAB_BINARY;
const std::string kStandIn = GPULAB_STAND_IN;

using test::DefaultSignals;
using test::have_script;
using test::sh;
using test::TempFolder;

// gpulab with its record folders in `folder` (a command that `exec` and `nohup` take).
std::string gpulab_in(const TempFolder& folder) {
  return "env TMPDIR=" + folder.path + " " + kBinary;
}

int record_folders(const TempFolder& folder) {
  int n = 0;
  for (const auto& name : folder.names()) n += name.rfind("gpulab-profile-", 0) == 0;
  return n;
}

// The signal set of a /proc/PID/status line ("SigIgn:\t0000000000000001") the program printed.
unsigned long long signal_set(const std::string& text, const std::string& field) {
  const auto at = text.find(field + ":");
  if (at == std::string::npos) return ~0ull;
  return std::stoull(text.substr(at + field.size() + 1), nullptr, 16);
}

unsigned long long bit(int signal) { return 1ull << (signal - 1); }

// Whether process `pid` is gone (or a zombie nobody has reaped yet: it runs no more).
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Waits, at most `seconds`, for `path` to exist.
bool wait_for(const std::string& path, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(ProfileProcess, TheProgramStartsWithTheCallersDispositionsAndMask) {
  DefaultSignals terminal;
  TempFolder folder;
  const std::string show = " profile --replay none -- grep -E '^Sig(Ign|Blk)' /proc/self/status";
  // Under nohup, SIGHUP stays ignored.
  const std::string errors = " 2>>" + folder / "errors.txt";
  const auto nohup = sh("nohup " + gpulab_in(folder) + show + errors);
  EXPECT_EQ(nohup.code, 0) << nohup.text;
  EXPECT_TRUE(signal_set(nohup.text, "SigIgn") & bit(SIGHUP)) << nohup.text;
  // A background job of a shell without job control starts with SIGINT and SIGQUIT ignored.
  const auto job = sh("sh -c '" + gpulab_in(folder) +
                      " profile --replay none -- grep -E "
                      "^SigIgn /proc/self/status & wait'" +
                      errors);
  EXPECT_EQ(signal_set(job.text, "SigIgn") & (bit(SIGINT) | bit(SIGQUIT)),
            bit(SIGINT) | bit(SIGQUIT))
      << job.text;
  // The caller's blocked signals stay blocked.
  const auto blocked =
      sh("python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, "
         "[signal.SIGUSR1]); os.execvp(sys.argv[1], sys.argv[1:])' env TMPDIR=" +
         folder.path + " " + kBinary + show + errors);
  EXPECT_TRUE(signal_set(blocked.text, "SigBlk") & bit(SIGUSR1)) << blocked.text;
  // And where the caller ignored nothing, the program ignores none of the signals gpulab passes on.
  const auto plain = sh(gpulab_in(folder) + show + errors);
  EXPECT_EQ(
      signal_set(plain.text, "SigIgn") & (bit(SIGHUP) | bit(SIGINT) | bit(SIGQUIT) | bit(SIGTERM)),
      0u)
      << plain.text;
  EXPECT_EQ(record_folders(folder), 0);
}

// Starts `args` with the default dispositions of the signals a terminal sends (whatever this
// process was started with), stdout and stderr into `output`; returns its pid.
pid_t start(const std::vector<std::string>& args, const std::string& output) {
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGHUP, SIGINT, SIGQUIT, SIGTERM}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], &files, &attributes, argv.data(), environ) != 0) pid = -1;
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  return pid;
}

// SIGTERM, SIGHUP and SIGINT sent to gpulab (by `kill`, `timeout`, a batch system) reach the
// program, and gpulab writes the report of what it did with the cause, exiting 128 + N.
TEST(ProfileProcess, SignalsToGpulabReachTheProgramAndThePartialReportIsWritten) {
  for (const int signal : {SIGTERM, SIGHUP, SIGINT}) {
    TempFolder folder;
    const std::string name = sigabbrev_np(signal);
    const std::string ready = folder / "ready", json = folder / "report.json";
    const pid_t gpulab =
        start({"/usr/bin/env", "TMPDIR=" + folder.path, kBinary, "profile", "--replay", "none",
               "--json", json, kStandIn, "--ready", ready, "--sleep", "60"},
              folder / "output.txt");
    ASSERT_GT(gpulab, 0);
    EXPECT_TRUE(wait_for(ready, 20)) << name;
    ::kill(gpulab, signal);
    int status = 0;
    ::waitpid(gpulab, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << name << ": gpulab lived to write the report";
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal) << name;
    const report::Report r = report::load_report(json);
    ASSERT_TRUE(r.program);
    EXPECT_EQ(r.program->signal, "SIG" + name);
    EXPECT_EQ(r.program->ended, "killed by SIG" + name);
    ASSERT_EQ(r.variants.size(), 1u) << "the records written before the signal";
    EXPECT_EQ(r.variants[0].totals->launches, 2);
    EXPECT_EQ(record_folders(folder), 0);
  }
}

TEST(ProfileProcess, SigkillOfGpulabLeavesNoProgramAndTheNextRunRemovesItsFolder) {
  TempFolder folder;
  const std::string ready = folder / "ready";
  const pid_t gpulab = start({"/usr/bin/env", "TMPDIR=" + folder.path, kBinary, "profile",
                              "--replay", "none", kStandIn, "--ready", ready, "--sleep", "60"},
                             folder / "output.txt");
  ASSERT_GT(gpulab, 0);
  EXPECT_TRUE(wait_for(ready, 20));
  ::kill(gpulab, SIGKILL);
  int status = 0;
  ::waitpid(gpulab, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  pid_t program = 0;
  std::ifstream(ready) >> program;
  ASSERT_GT(program, 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!gone(program) && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(gone(program)) << "the program died with gpulab";
  if (!gone(program)) ::kill(program, SIGKILL);
  EXPECT_EQ(record_folders(folder), 1) << "a killed gpulab cannot remove its own";

  const auto next = sh(gpulab_in(folder) + " profile --replay none -- true 2>&1");
  EXPECT_EQ(next.code, 0) << next.text;
  EXPECT_EQ(record_folders(folder), 0) << "the next run removed the dead run's folder";
}

TEST(ProfileProcess, TheRecordFolderGoesWithWhatTheProgramLeftInIt) {
  TempFolder folder;
  const auto out =
      sh(gpulab_in(folder) + " profile --replay none -- " + kStandIn + " --subfolder 2>&1");
  EXPECT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("kernel"), std::string::npos) << out.text;
  EXPECT_EQ(record_folders(folder), 0);
}

// The program writes the record folder: a FIFO would block a reader, a link would read what it
// points to. Neither is read, and the report says so.
TEST(ProfileProcess, RecordFolderEntriesThatAreNotPlainFilesAreNotRead) {
  TempFolder folder;
  const std::string json = folder / "report.json";
  const auto out = sh("timeout 20 " + gpulab_in(folder) + " profile --replay none --json " + json +
                      " -- " + kStandIn + " --odd-files 2>&1");
  EXPECT_EQ(out.code, 0) << out.text;
  const report::Report r = report::load_report(json);
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_EQ(r.variants[0].totals->launches, 2) << "the link's records were not read twice";
  std::string left_out;
  for (const auto& line : r.program->left_out) left_out += line + "\n";
  EXPECT_NE(left_out.find("fifo.jsonl: not a plain file"), std::string::npos) << left_out;
  EXPECT_NE(left_out.find("link.jsonl: not a plain file"), std::string::npos) << left_out;
  EXPECT_EQ(record_folders(folder), 0);
}

std::string text_of(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// Runs `command` with /bin/sh and waits for it: its exit status, and in `peak_kib` the most memory
// it or any process it waited for held (wait4's ru_maxrss covers the waited-for descendants).
int run_measured(const std::string& command, long& peak_kib) {
  pid_t pid = 0;
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
    return -1;
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return -1;
  peak_kib = usage.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A program of 1.5 million launches of three functions leaves each function's first 256 launches
// recorded and the rest tallied (reports/launch_tally.hpp): its records and gpulab's memory stay
// bounded, and the report still counts and times every launch.
TEST(ProfileProcess, AMillionLaunchesLeaveBoundedRecordsAndMemory) {
  TempFolder folder;
  const std::string json = folder / "report.json";
  const std::string bytes = folder / "record-bytes";
  long peak_kib = 0;
  const int code =
      run_measured(gpulab_in(folder) + " profile --replay none --json " + json + " -- " + kStandIn +
                       " --launches 1500000 --functions 3 --record-bytes " + bytes + " >" +
                       folder / "out.txt" + " 2>&1",
                   peak_kib);
  ASSERT_EQ(code, 0) << text_of(folder / "out.txt");
  // docs/profile.md's bound: 1 KiB per launch recorded in full, 256 B per tally line.
  const long record_bytes = std::stol(text_of(bytes));
  constexpr long kTallyWrites = 1'500'000 / report::kTallyEvery + 2;
  EXPECT_LT(record_bytes, 3 * report::kFullRecordsPerFunction * 1024 + kTallyWrites * 3 * 256);
  std::cout << "1.5 million launches: " << record_bytes << " bytes of records, peak " << peak_kib
            << " KiB\n";
  // AddressSanitizer's shadow and quarantine make the figure its own, not gpulab's.
  if (!test::kSanitized) EXPECT_LT(peak_kib, 200 * 1024) << "KiB at the peak";

  const report::Report r = report::load_report(json);
  ASSERT_EQ(r.variants.size(), 3u);
  for (const auto& v : r.variants) {
    EXPECT_EQ(v.totals->launches, 500'000) << v.name;
    EXPECT_EQ(v.totals->timed_launches, 500'000) << v.name;
    EXPECT_NEAR(v.totals->total_seconds, 0.5, 1e-6) << v.name;
    EXPECT_EQ(v.timing.samples.size(), static_cast<std::size_t>(report::kFullRecordsPerFunction))
        << v.name;
  }
  EXPECT_EQ(r.program->launches, 1'500'000);
  EXPECT_EQ(r.program->processes.at(0).launches, 1'500'000);
  std::string left_out;
  for (const auto& line : r.program->left_out) left_out += line + "\n";
  EXPECT_NE(left_out.find("1499232 launches past each function's first 256 were counted"),
            std::string::npos)
      << left_out;
  EXPECT_EQ(left_out.find("have no duration"), std::string::npos) << left_out;
  EXPECT_EQ(record_folders(folder), 0);
}

TEST(ProfileProcess, AProgramThatCannotRunIs127Or126AsInAShell) {
  TempFolder folder;
  std::ofstream(folder / "not-executable") << "echo never\n";
  std::ofstream(folder / "no-shebang") << "echo script ran with $1\n";
  fs::permissions(folder / "no-shebang", fs::perms::owner_all);
  struct Case {
    std::string program;
    int code;
    std::string says;
  };
  const Case cases[] = {
      {"no-such-program-anywhere", 127, "cannot run 'no-such-program-anywhere': not found on PATH"},
      {folder / "absent", 127, "No such file or directory"},
      {folder / "not-executable", 126, "Permission denied"},
      {folder.path, 126, "Is a directory"},
  };
  for (const auto& c : cases) {
    const auto out = sh(gpulab_in(folder) + " profile -- " + c.program + " 2>&1");
    EXPECT_EQ(out.code, c.code) << c.program << "\n" << out.text;
    EXPECT_NE(out.text.find(c.says), std::string::npos) << out.text;
    EXPECT_EQ(std::count(out.text.begin(), out.text.end(), '\n'), 1) << out.text;
  }
  // A script without "#!" runs under sh, as a shell runs it.
  const auto script = sh(gpulab_in(folder) + " profile -- " + folder / "no-shebang" + " x 2>&1");
  EXPECT_EQ(script.code, 0) << script.text;
  EXPECT_EQ(script.text.rfind("script ran with x\n", 0), 0u) << script.text;
  EXPECT_EQ(record_folders(folder), 0);
}

// On a terminal, a first Ctrl-C reaches the program (which ignores it); a second one while it
// still runs ends it, and the profile ends with 130 with the report of what it did.
TEST(ProfileProcess, ASecondCtrlCEndsAProgramThatIgnoresTheFirst) {
  if (!have_script()) GTEST_SKIP() << "needs `script` (util-linux) for a pseudo-terminal";
  DefaultSignals terminal;
  TempFolder folder;
  const auto begin = std::chrono::steady_clock::now();
  const std::string command = gpulab_in(folder) + " profile --replay none " + kStandIn +
                              " --ignore-int --ready " + folder / "ready" + " --sleep 60";
  // Ctrl-C once the program runs (and has written its records), not before.
  const std::string until_ready =
      "while [ ! -f " + folder / "ready" + " ]; do sleep 0.05; done; rm " + folder / "ready" + "; ";
  // script(1) runs the command through a shell: `exec` makes gpulab the terminal's foreground.
  const auto out = sh("(" + until_ready +
                      "printf '\\003'; sleep 1; printf '\\003') | timeout 30 script -qec "
                      "'exec " +
                      command + "' " + folder / "typescript" + " 2>&1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(out.code, 130) << out.text;
  EXPECT_LT(seconds, 20) << out.text;
  EXPECT_NE(out.text.find("killed by SIGKILL at a second Ctrl-C"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("kernel"), std::string::npos) << "the report:\n" << out.text;
  EXPECT_EQ(record_folders(folder), 0);

  // In the shell, the profile ends the same way and the shell goes on.
  const auto shell =
      sh("(sleep 1; printf 'profile --replay none -- " + kStandIn + " --ignore-int --ready " +
         folder / "ready" + " --sleep 60\\n'; " + until_ready +
         "printf '\\003'; sleep 1; printf '\\003'; "
         "sleep 1; printf 'list\\nquit\\n') | HOME=" +
         folder.path + " TMPDIR=" + folder.path + " timeout 30 script -qec 'exec " + kBinary +
         " shell' " + folder / "typescript-shell" + " 2>&1");
  EXPECT_EQ(shell.code, 0) << shell.text;
  const auto killed = shell.text.find("killed by SIGKILL at a second Ctrl-C");
  ASSERT_NE(killed, std::string::npos) << shell.text;
  EXPECT_NE(shell.text.find("global coalescing", killed), std::string::npos)
      << "the next command ran:\n"
      << shell.text;
}

}  // namespace
}  // namespace gpulab
