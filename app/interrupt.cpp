#include "app/interrupt.hpp"

#include <atomic>

namespace gpulab::app {
namespace {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int signo) {
  if (g_interrupted.exchange(true)) {  // the first one was not taken yet: stop for real
    std::signal(signo, SIG_DFL);
    std::raise(signo);
  }
}

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted = false;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, &previous_);
}

InterruptScope::~InterruptScope() {
  ::sigaction(SIGINT, &previous_, nullptr);
  g_interrupted = false;
}

bool take_interrupt() {
  return g_interrupted.exchange(false);
}

bool interrupt_pending() {
  return g_interrupted.load();
}

void stop_if_interrupted() {
  if (take_interrupt()) throw Interrupted();
}

}  // namespace gpulab::app
