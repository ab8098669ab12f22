// A signal that stops a command at a safe point instead of ending the process. While an
// InterruptScope lives, its signals only raise a flag: in the interactive shell Ctrl-C (SIGINT)
// discards the line being typed, and a running command stops at its next safe point (between
// variants and between the steps of a lab run; a kernel in flight finishes first) by throwing
// Interrupted. `gpulab sweep` also takes SIGTERM and SIGHUP so, to write the points measured
// before it ends. A second signal before the first was taken ends the process the usual way (for
// a command that hangs).
#pragma once

#include <csignal>
#include <initializer_list>
#include <utility>
#include <vector>

#include "reports/base/errors.hpp"

namespace gpulab::app {

class InterruptScope {
 public:
  InterruptScope() : InterruptScope({SIGINT}) {}
  // Installs the handler (without SA_RESTART: a blocked read returns) for each signal that is not
  // ignored: a signal ignored on entry (nohup's SIGHUP) stays ignored, as shells keep it.
  explicit InterruptScope(std::initializer_list<int> signals);
  ~InterruptScope();  // restores the previous dispositions
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  std::vector<std::pair<int, struct sigaction>> previous_;
};

// Whether a signal came since the last take_interrupt(); clears the flag.
bool take_interrupt();

// Whether a signal came and was not yet taken (leaves the flag set).
bool interrupt_pending();

// A safe point: throws Interrupted when a signal came (and takes the flag).
void stop_if_interrupted();

// The signal the last Interrupted was thrown for (SIGINT where none was).
int interrupting_signal();

// Ends the process as `signo` ends it by default (a parent sees the signal, as after any process
// the signal stopped), after flushing the standard streams. Does not return.
[[noreturn]] void end_as_signal(int signo);

}  // namespace gpulab::app
