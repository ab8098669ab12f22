// Ctrl-C in the interactive shell stops the command, not the shell. While an InterruptScope
// lives, SIGINT only raises a flag: the line editor discards the line being typed, and a
// running command stops at its next safe point (between variants and between the steps of a
// lab run; a kernel in flight finishes first) by throwing Interrupted. A second Ctrl-C before
// the first was taken ends the process the usual way (status 130), for a command that hangs.
#pragma once

#include <csignal>

#include "reports/base/errors.hpp"

namespace gpulab::app {

class InterruptScope {
 public:
  InterruptScope();   // installs the handler (without SA_RESTART: a blocked read returns)
  ~InterruptScope();  // restores the previous disposition
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction previous_ {};
};

// Whether Ctrl-C was pressed since the last take_interrupt(); clears the flag.
bool take_interrupt();

// Whether Ctrl-C was pressed and not yet taken (leaves the flag set).
bool interrupt_pending();

// A safe point: throws Interrupted when Ctrl-C was pressed (and takes the flag).
void stop_if_interrupted();

}  // namespace gpulab::app
