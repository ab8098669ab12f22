// Runs a program as a child of gpulab, as a shell would run it in the foreground: the program is
// found on PATH (no shell in between), its stdin, stdout and stderr are gpulab's, and gpulab waits
// for it. Ctrl-C and Ctrl-\ from the terminal reach the program (the terminal signals the whole
// foreground group) and gpulab lets them: it outlives the program to write the report. SIGTERM
// and SIGHUP sent to gpulab alone are passed on to the program.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::app {

struct ProgramEnd {
  std::optional<int> exit_code;  // when the program exited
  int signal = 0;                // when a signal ended it
  double wall_seconds = 0;

  // One line: "exited with status 3", "killed by SIGSEGV (core dumped)".
  std::string describe() const;
  // The status a shell gives for it: the exit code, or 128 + the signal.
  int shell_status() const;
  bool core_dumped = false;
};

// Runs `argv` with `environment` added to gpulab's own (a name given there replaces gpulab's
// value). Throws UsageError when the program cannot be started (not found, not executable).
ProgramEnd run_program(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& environment);

// "SIGSEGV" for 11; "signal N" for a number the system has no name for.
std::string signal_name(int signal);

}  // namespace gpulab::app
