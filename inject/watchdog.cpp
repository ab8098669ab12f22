#include "inject/watchdog.hpp"

namespace gpulab::inject {

Watchdog::Watchdog(double seconds, Timeout on_timeout)
    : seconds_(seconds), on_timeout_(std::move(on_timeout)) {
  if (seconds_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::arm(std::int64_t launch_index, const std::string& name) {
  if (seconds_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    launch_index_ = launch_index;
    name_ = name;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds_));
  }
  changed_.notify_all();
}

void Watchdog::disarm() {
  if (seconds_ <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      armed_ = false;
      const auto index = launch_index_;
      const auto name = name_;
      lock.unlock();
      on_timeout_(index, name, seconds_);
      lock.lock();
    }
  }
}

}  // namespace gpulab::inject
