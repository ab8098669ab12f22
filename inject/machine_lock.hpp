// A lock every process of the machine sees by name, without a file: an abstract-namespace Unix
// socket (Linux), bound by one process at a time. The kernel releases it when its process dies
// (however it dies), no folder's permissions are involved, and nothing is left behind. Processes
// in another network namespace (another container) do not see it.
#pragma once

#include <string>

namespace gpulab::inject {

class MachineLock {
 public:
  enum class Outcome {
    held,       // this process holds it
    timed_out,  // another process held it all the time allowed
    failed,     // the lock could not be used (why() says why); nothing is held
  };

  explicit MachineLock(std::string name) : name_(std::move(name)) {}
  ~MachineLock() { release(); }
  MachineLock(const MachineLock&) = delete;
  MachineLock& operator=(const MachineLock&) = delete;

  // Waits at most `seconds` for the lock.
  Outcome acquire(double seconds);
  void release();
  bool held() const { return fd_ >= 0; }
  const std::string& why() const { return why_; }

 private:
  std::string name_;
  int fd_ = -1;
  std::string why_;
};

}  // namespace gpulab::inject
