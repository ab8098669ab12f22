#include "inject/machine_lock.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

namespace gpulab::inject {

MachineLock::Outcome MachineLock::acquire(double seconds) {
  if (held()) return Outcome::held;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // The abstract namespace: a name that starts with a NUL byte, not a path.
  if (name_.size() + 1 > sizeof address.sun_path) {
    why_ = "the lock's name is too long";
    return Outcome::failed;
  }
  std::memcpy(address.sun_path + 1, name_.data(), name_.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_.size());
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  for (;;) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why_ = std::string("socket: ") + std::strerror(errno);
      return Outcome::failed;
    }
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) {
      fd_ = fd;
      return Outcome::held;
    }
    const int error = errno;
    ::close(fd);
    if (error != EADDRINUSE) {
      why_ = std::string("bind: ") + std::strerror(error);
      return Outcome::failed;
    }
    if (std::chrono::steady_clock::now() >= deadline) return Outcome::timed_out;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void MachineLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
}

}  // namespace gpulab::inject
