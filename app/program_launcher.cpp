#include "app/program_launcher.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "reports/base/errors.hpp"

extern char** environ;

namespace gpulab::app {
namespace {

std::atomic<pid_t> g_child{0};

void pass_on(int signo) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, signo);
}

// While the program runs: the terminal's signals are the program's to act on (gpulab must live to
// write the report), and the ones sent to gpulab alone are passed on. Restored on every way out.
class SignalsWhileWaiting {
 public:
  SignalsWhileWaiting() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    struct sigaction forward {};
    forward.sa_handler = pass_on;
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    for (std::size_t i = 0; i < kSignals; ++i)
      ::sigaction(kWhich[i], kForwarded[i] ? &forward : &ignore, &previous_[i]);
  }
  ~SignalsWhileWaiting() {
    for (std::size_t i = 0; i < kSignals; ++i) ::sigaction(kWhich[i], &previous_[i], nullptr);
  }
  SignalsWhileWaiting(const SignalsWhileWaiting&) = delete;
  SignalsWhileWaiting& operator=(const SignalsWhileWaiting&) = delete;

 private:
  static constexpr std::size_t kSignals = 4;
  static constexpr int kWhich[kSignals] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
  static constexpr bool kForwarded[kSignals] = {false, false, true, true};
  struct sigaction previous_[kSignals] {};
};

// gpulab's environment with `extra` put in (replacing a variable of the same name).
std::vector<std::string> environment_with(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (!extra.count(name)) out.push_back(entry);
  }
  for (const auto& [name, value] : extra) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string ProgramEnd::describe() const {
  if (exit_code) return fmt::format("exited with status {}", *exit_code);
  return fmt::format("killed by {}{}", signal_name(signal), core_dumped ? " (core dumped)" : "");
}

int ProgramEnd::shell_status() const { return exit_code ? *exit_code : 128 + signal; }

ProgramEnd run_program(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& environment) {
  if (argv.empty())
    throw UsageError("no program to run (gpulab profile [OPTIONS] -- APP [ARGS...])");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = environment_with(environment);
  auto arg_pointers = pointers(args);
  auto env_pointers = pointers(env);

  ProgramEnd end;
  const auto begin = std::chrono::steady_clock::now();
  SignalsWhileWaiting signals;
  pid_t pid = 0;
  // posix_spawnp searches PATH like execvp; the child starts with default signal dispositions
  // for the signals gpulab ignores while it waits.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  const int failed = ::posix_spawnp(&pid, args[0].c_str(), nullptr, &attributes,
                                    arg_pointers.data(), env_pointers.data());
  posix_spawnattr_destroy(&attributes);
  if (failed != 0)
    throw UsageError(fmt::format("cannot run '{}': {}", argv[0], std::strerror(failed)));
  g_child = pid;

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      g_child = 0;
      throw Error(ExitCode::internal,
                  fmt::format("waiting for '{}' failed: {}", argv[0], std::strerror(errno)));
    }
  }
  g_child = 0;
  end.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (WIFEXITED(status)) {
    end.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
    end.core_dumped = WCOREDUMP(status);
  }
  return end;
}

}  // namespace gpulab::app
