#include "app/program_launcher.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "reports/base/errors.hpp"

extern char** environ;

namespace gpulab::app {
namespace {

// The signals gpulab passes on to the program while it waits for it.
constexpr int kPassedOn[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};

// What gpulab was started with, read before main(): the program starts with the same. gpulab's
// own handlers (the shell's Ctrl-C, the waits below) are not the caller's and do not count.
struct StartingSignals {
  bool ignored[NSIG] = {};
  sigset_t mask{};
  StartingSignals() {
    for (int s = 1; s < NSIG; ++s) {
      struct sigaction current {};
      ignored[s] = ::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
    }
    ::sigprocmask(SIG_BLOCK, nullptr, &mask);
  }
};
const StartingSignals g_starting;

std::atomic<pid_t> g_child{0};
std::atomic<int> g_terminal_interrupts{0};
std::atomic<bool> g_ended_by_gpulab{false};

// A signal to gpulab while the program runs. The terminal's (si_code SI_KERNEL) went to the
// whole foreground group, the program included: a first Ctrl-C is the program's to act on, a
// second one while it still runs ends it. Any other sender meant gpulab: passed on.
void on_signal(int signo, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child <= 0) return;
  const bool from_terminal = info && info->si_code == SI_KERNEL;
  if (from_terminal && (signo == SIGINT || signo == SIGQUIT)) {
    if (signo == SIGINT && g_terminal_interrupts.fetch_add(1) >= 1) {
      g_ended_by_gpulab = true;
      ::kill(child, SIGKILL);
    }
    return;
  }
  ::kill(child, signo);
}

// While the program runs: the signals above are handled by on_signal, except those gpulab was
// started with ignored, which stay ignored (for the program too). Restored on every way out.
class SignalsWhileWaiting {
 public:
  SignalsWhileWaiting() {
    g_terminal_interrupts = 0;
    g_ended_by_gpulab = false;
    struct sigaction handle {};
    handle.sa_sigaction = on_signal;
    sigemptyset(&handle.sa_mask);
    handle.sa_flags = SA_SIGINFO | SA_RESTART;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (std::size_t i = 0; i < std::size(kPassedOn); ++i)
      ::sigaction(kPassedOn[i], g_starting.ignored[kPassedOn[i]] ? &ignore : &handle,
                  &previous_[i]);
  }
  ~SignalsWhileWaiting() {
    for (std::size_t i = 0; i < std::size(kPassedOn); ++i)
      ::sigaction(kPassedOn[i], &previous_[i], nullptr);
  }
  SignalsWhileWaiting(const SignalsWhileWaiting&) = delete;
  SignalsWhileWaiting& operator=(const SignalsWhileWaiting&) = delete;

 private:
  struct sigaction previous_[std::size(kPassedOn)]{};
};

// Every signal blocked from before the fork until the child has set its own dispositions, so
// that none reaches gpulab's handlers inside the child.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &previous_);
  }
  ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t previous_{};
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

[[noreturn]] void cannot_run(const std::string& name, int error) {
  const bool missing = error == ENOENT || error == ENOTDIR;
  throw Error(
      missing ? ExitCode::program_not_found : ExitCode::program_not_executable,
      fmt::format("cannot run '{}': {}", name,
                  error == ENOENT && name.find('/') == std::string::npos ? "not found on PATH"
                                                                         : std::strerror(error)));
}

bool executable_file(const std::string& path, int& error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = errno;
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = EISDIR;
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    error = errno;
    return false;
  }
  return true;
}

// The file a shell runs for `name`: `name` itself when it holds a '/', else the first executable
// file of that name in PATH's folders (an empty entry is the current folder; without PATH, the
// system's default). A file found but not executable is remembered as the reason (126).
std::string program_file(const std::string& name) {
  int error = ENOENT;
  if (name.find('/') != std::string::npos) {
    if (!executable_file(name, error)) cannot_run(name, error);
    return name;
  }
  if (name.empty()) cannot_run(name, ENOENT);
  std::string path;
  if (const char* given = std::getenv("PATH")) {
    path = given;
  } else {
    path.resize(::confstr(_CS_PATH, nullptr, 0));
    ::confstr(_CS_PATH, path.data(), path.size());
    path.resize(std::strlen(path.c_str()));
  }
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    const std::string folder = path.substr(begin, end - begin);
    const std::string candidate = (folder.empty() ? "." : folder) + "/" + name;
    int why = 0;
    if (executable_file(candidate, why)) return candidate;
    if (why != ENOENT && why != ENOTDIR) error = why;  // found, but not runnable
    begin = end + 1;
  }
  cannot_run(name, error);
}

// In the child, between fork and exec: only async-signal-safe calls. Writes errno to `report`
// when the program cannot be executed.
[[noreturn]] void become_program(pid_t parent, int report, const char* file, char* const* argv,
                                 char* const* shell_argv, char* const* envp) {
  // Die with gpulab; had it died before this call, nothing would signal the child: check.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    action.sa_handler = g_starting.ignored[s] ? SIG_IGN : SIG_DFL;
    ::sigaction(s, &action, nullptr);
  }
  ::sigprocmask(SIG_SETMASK, &g_starting.mask, nullptr);
  ::execve(file, argv, envp);
  // A file the kernel does not know how to run (a script without "#!") is a shell script, as
  // shells take it.
  if (errno == ENOEXEC) ::execve(shell_argv[0], shell_argv, envp);
  const int error = errno;
  [[maybe_unused]] const ssize_t n = ::write(report, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string ProgramEnd::describe() const {
  if (exit_code) return fmt::format("exited with status {}", *exit_code);
  return fmt::format("killed by {}{}{}", signal_name(signal), core_dumped ? " (core dumped)" : "",
                     interrupted ? " at a second Ctrl-C" : "");
}

int ProgramEnd::shell_status() const {
  if (interrupted) return 128 + SIGINT;
  return exit_code ? *exit_code : 128 + signal;
}

SignalsHeld::SignalsHeld() {
  sigset_t held;
  sigemptyset(&held);
  for (int s : kPassedOn) sigaddset(&held, s);
  ::pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

SignalsHeld::~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

ProgramEnd run_program(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& environment) {
  if (argv.empty()) throw UsageError("no program to run (gpulab profile [OPTIONS] APP [ARGS...])");
  std::string file = program_file(argv[0]);
  std::vector<std::string> args = argv;
  std::vector<std::string> shell_args = {"/bin/sh", file};
  shell_args.insert(shell_args.end(), argv.begin() + 1, argv.end());
  std::vector<std::string> env = environment_with(environment);
  auto arg_pointers = pointers(args);
  auto shell_pointers = pointers(shell_args);
  auto env_pointers = pointers(env);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    throw Error(ExitCode::internal,
                fmt::format("cannot start '{}': {}", argv[0], std::strerror(errno)));
  ProgramEnd end;
  const auto begin = std::chrono::steady_clock::now();
  SignalsWhileWaiting signals;
  pid_t pid = 0;
  {
    AllSignalsBlocked blocked;
    const pid_t parent = ::getpid();
    pid = ::fork();
    if (pid == 0)
      become_program(parent, report[1], file.c_str(), arg_pointers.data(), shell_pointers.data(),
                     env_pointers.data());
    if (pid > 0) g_child = pid;
  }
  const int fork_error = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    throw Error(ExitCode::internal,
                fmt::format("cannot start '{}': {}", argv[0], std::strerror(fork_error)));
  }
  // The pipe closes at a successful exec; an errno on it means the exec failed.
  int exec_error = 0;
  ssize_t got;
  while ((got = ::read(report[0], &exec_error, sizeof exec_error)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      g_child = 0;
      throw Error(ExitCode::internal,
                  fmt::format("waiting for '{}' failed: {}", argv[0], std::strerror(errno)));
    }
  }
  g_child = 0;
  if (got == static_cast<ssize_t>(sizeof exec_error)) cannot_run(argv[0], exec_error);
  end.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (WIFEXITED(status)) {
    end.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
    end.core_dumped = WCOREDUMP(status);
    end.interrupted = g_ended_by_gpulab && end.signal == SIGKILL;
  }
  return end;
}

}  // namespace gpulab::app
