// Runs a program as a child of gpulab, as a shell runs one in the foreground:
// - it is found as a shell finds it (a name with a '/' as is, else on PATH; a file the kernel
//   cannot execute, such as a script without a shebang, runs under /bin/sh), and one that cannot
//   be run is exit 127 (not found) or 126 (found, not executable), as shells give them;
// - its stdin, stdout and stderr are gpulab's, and it stays in gpulab's process group, so Ctrl-C
//   and Ctrl-\ at the terminal reach it;
// - it starts with the signal dispositions and mask gpulab was started with: under `nohup`
//   SIGHUP stays ignored, in a background job SIGINT and SIGQUIT do;
// - it dies with gpulab (PR_SET_PDEATHSIG): a gpulab killed outright leaves no program running.
// While it runs, SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to gpulab by another process are passed
// on to it, and gpulab lives on to write the report of what it did. A Ctrl-C at the terminal
// reached the program already; a second one while the program still runs (it ignores or outlasts
// Ctrl-C) ends it with SIGKILL, and the profile ends with 130.
#pragma once

#include <signal.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::app {

struct ProgramEnd {
  std::optional<int> exit_code;  // when the program exited
  int signal = 0;                // when a signal ended it
  bool core_dumped = false;
  bool interrupted = false;  // gpulab ended it at a second Ctrl-C
  double wall_seconds = 0;

  // One line: "exited with status 3", "killed by SIGSEGV (core dumped)".
  std::string describe() const;
  // The status a shell gives for it: the exit code, or 128 + the signal; 130 where a second
  // Ctrl-C ended it (as the Ctrl-C would have ended a program that heeds it).
  int shell_status() const;
};

// Runs `argv` with `environment` added to gpulab's own (a name given there replaces gpulab's
// value). Throws Error with exit code 127 (program_not_found) or 126 (program_not_executable)
// when the program cannot be started.
ProgramEnd run_program(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& environment);

// "SIGSEGV" for 11; "signal N" for a number the system has no name for.
std::string signal_name(int signal);

// While one lives, SIGINT, SIGQUIT, SIGTERM and SIGHUP are held back: one that arrives meanwhile
// is delivered when it ends (so that gpulab's record folder is read and removed whole).
class SignalsHeld {
 public:
  SignalsHeld();
  ~SignalsHeld();
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t previous_{};
};

}  // namespace gpulab::app
