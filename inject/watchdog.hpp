// A kernel that waits for another (a spin-wait, an NCCL collective) never finishes under kernel
// replay, which runs it alone: without a limit, the profiled program would hang with no word of
// why. The watchdog thread watches the one profiled launch in flight; past the limit it calls
// `on_timeout` (which records the launch and ends the process). A child made by fork() has no
// watchdog thread: its launches are not watched.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace gpulab::inject {

class Watchdog {
 public:
  using Timeout =
      std::function<void(std::int64_t launch_index, const std::string& name, double seconds)>;

  // seconds <= 0: no watchdog (no thread).
  Watchdog(double seconds, Timeout on_timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(std::int64_t launch_index, const std::string& name);
  void disarm();

 private:
  void watch();

  double seconds_;
  Timeout on_timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
  std::int64_t launch_index_ = 0;
  std::string name_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace gpulab::inject
