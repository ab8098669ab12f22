// Runs a shell command line from a test, for the tests that drive the gpulab binary as a user's
// shell would (pipes, terminals, child programs).
#pragma once

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

}  // namespace gpulab::test
