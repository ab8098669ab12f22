#include "inject/record_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpulab::inject {

RecordFile::RecordFile(std::string dir, std::function<std::string()> first_line)
    : dir_(std::move(dir)), first_line_(std::move(first_line)) {}

void RecordFile::open_for_this_process() {
  if (fd_ >= 0) ::close(fd_);  // the parent's file, inherited through fork
  owner_ = ::getpid();
  const std::string path = dir_ + "/" + std::to_string(owner_) + ".jsonl";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0 && !reported_) {
    reported_ = true;
    std::fprintf(stderr, "gpulab: cannot write profile records to %s: %s\n", path.c_str(),
                 std::strerror(errno));
  }
  if (fd_ >= 0 && first_line_) write_all(first_line_());
}

void RecordFile::write_all(const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0 && fd_ >= 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!reported_) {
        reported_ = true;
        std::fprintf(stderr, "gpulab: writing profile records failed: %s\n", std::strerror(errno));
      }
      return;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void RecordFile::write(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (owner_ != ::getpid()) open_for_this_process();
  write_all(line);
}

}  // namespace gpulab::inject
