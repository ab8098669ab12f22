#include "inject/counter_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace gpulab::inject {
namespace {

std::string uuid_text(CUdevice device) {
  CUuuid uuid{};
  if (cuDeviceGetUuid_v2(&uuid, device) != CUDA_SUCCESS) return "device" + std::to_string(device);
  std::string out;
  char hex[3];
  for (unsigned char byte : uuid.bytes) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    out += hex;
  }
  return out;
}

}  // namespace

int CounterLock::file_for(CUdevice device) {
  if (owner_ != ::getpid()) {
    // The parent's descriptors share its lock state (flock locks belong to the open file):
    // a forked child must open files of its own.
    for (auto& [d, fd] : fds_) ::close(fd);
    fds_.clear();
    held_ = -1;
    owner_ = ::getpid();
  }
  if (auto it = fds_.find(device); it != fds_.end()) return it->second;
  const std::string path = dir_ + "/counters-" + uuid_text(device) + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) fds_[device] = fd;
  return fd;
}

bool CounterLock::acquire(CUdevice device, double seconds) {
  const int fd = file_for(device);
  if (fd < 0) return true;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  held_ = fd;
  return true;
}

void CounterLock::release() {
  if (held_ < 0 || owner_ != ::getpid()) return;
  ::flock(held_, LOCK_UN);
  held_ = -1;
}

}  // namespace gpulab::inject
