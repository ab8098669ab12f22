// The machine-wide lock two `gpulab profile` runs (or two processes of one program) take turns
// at a GPU's counters with (inject/machine_lock.hpp): held by one process at a time, waited for
// with a bound, released when its holder ends however it ends, and a lock that cannot be used
// says so rather than holding nothing quietly.
#include "inject/machine_lock.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

namespace gpulab::inject {
namespace {

using Outcome = MachineLock::Outcome;

// A name no other run of the tests uses.
std::string unique_name() {
  return "gpulab-test-lock-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::random_device{}());
}

TEST(MachineLock, OneHolderAtATime) {
  const std::string name = unique_name();
  MachineLock first(name), second(name);
  ASSERT_EQ(first.acquire(0), Outcome::held) << first.why();
  EXPECT_EQ(second.acquire(0.05), Outcome::timed_out);
  EXPECT_FALSE(second.held());
  first.release();
  EXPECT_EQ(second.acquire(0), Outcome::held) << second.why();
}

// Two processes take turns: the second waits until the first has ended, which lets go of the
// lock without releasing it (as a killed process would).
TEST(MachineLock, ProcessesTakeTurnsAndAnEndedHolderLetsGo) {
  const std::string name = unique_name();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MachineLock lock(name);
    const char held = lock.acquire(5) == Outcome::held ? 'y' : 'n';
    [[maybe_unused]] const auto n = ::write(ready[1], &held, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::_exit(0);  // no release: the lock goes with the process
  }
  ::close(ready[1]);
  char held = 0;
  ASSERT_EQ(::read(ready[0], &held, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(held, 'y');
  MachineLock mine(name);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(mine.acquire(10), Outcome::held) << mine.why();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_GT(waited, 0.2) << "it waited for the other process's turn";
  int status = 0;
  ::waitpid(child, &status, 0);
}

TEST(MachineLock, ALockThatCannotBeUsedSaysWhy) {
  MachineLock lock(std::string(200, 'x'));
  EXPECT_EQ(lock.acquire(0), Outcome::failed);
  EXPECT_FALSE(lock.held());
  EXPECT_NE(lock.why(), "");
}

}  // namespace
}  // namespace gpulab::inject
