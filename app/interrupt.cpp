#include "app/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>

namespace gpulab::app {
namespace {

std::atomic<int> g_signal{0};  // the signal not yet taken; 0: none
std::atomic<int> g_taken{SIGINT};
int g_scopes = 0;  // scopes alive (the shell's and a sweep's nest)

void on_interrupt(int signo) {
  if (g_signal.exchange(signo) != 0) {  // the first one was not taken yet: stop for real
    std::signal(signo, SIG_DFL);
    std::raise(signo);
  }
}

}  // namespace

InterruptScope::InterruptScope(std::initializer_list<int> signals) {
  if (g_scopes++ == 0) g_signal = 0;
  for (int signo : signals) {
    struct sigaction current {};
    ::sigaction(signo, nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    ::sigaction(signo, &action, &current);
    previous_.emplace_back(signo, current);
  }
}

InterruptScope::~InterruptScope() {
  for (auto it = previous_.rbegin(); it != previous_.rend(); ++it)
    ::sigaction(it->first, &it->second, nullptr);
  if (--g_scopes == 0) g_signal = 0;
}

bool take_interrupt() {
  const int signo = g_signal.exchange(0);
  if (signo != 0) g_taken = signo;
  return signo != 0;
}

bool interrupt_pending() { return g_signal.load() != 0; }

void stop_if_interrupted() {
  if (take_interrupt()) throw Interrupted();
}

int interrupting_signal() { return g_taken.load(); }

void end_as_signal(int signo) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::signal(signo, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signo);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  std::raise(signo);
  ::_exit(128 + signo);  // a signal whose default is not to end the process
}

}  // namespace gpulab::app
