// Runs a shell command line from a test, for the tests that drive the gpulab binary as a user's
// shell would (pipes, terminals, child programs).
#pragma once

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace gpulab::test {

struct ShellResult {
  int code;          // the exit status; -1 when the command could not run or was killed
  std::string text;  // its stdout (and stderr, with `2>&1`)
};

inline ShellResult sh(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {-1, ""};
  std::string text;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) text += buf.data();
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

// Whether `script` (util-linux) is there to give a command a pseudo-terminal.
inline bool have_script() { return !sh("command -v script").text.empty(); }

// While one lives, this process (and so every command it starts) has the default dispositions of
// the signals a terminal sends, whatever the test runner was started with (a background job
// starts with SIGINT and SIGQUIT ignored, nohup with SIGHUP ignored): as a user's terminal has.
class DefaultSignals {
 public:
  DefaultSignals() {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < kCount; ++i) ::sigaction(kSignals[i], &action, &previous_[i]);
  }
  ~DefaultSignals() {
    for (int i = 0; i < kCount; ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
  }
  DefaultSignals(const DefaultSignals&) = delete;
  DefaultSignals& operator=(const DefaultSignals&) = delete;

 private:
  static constexpr int kCount = 4;
  static constexpr int kSignals[kCount] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM};
  struct sigaction previous_[kCount] {};
};

}  // namespace gpulab::test
