#include "reports/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/errors.hpp"

namespace gpulab {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw UsageError("cannot write '" + path + "': " + what);
}

// The file a write to `path` lands in: a symbolic link is followed to its target (existing or
// not), as a shell's `>` does, so that renaming the new file into place replaces the target
// and leaves the link standing.
std::string write_target(const std::string& path) {
  std::string target = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return target;
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(target.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) fail(path, std::strerror(errno));
    const std::string link(buf.data(), static_cast<std::size_t>(n));
    target = link[0] == '/' || target.find('/') == std::string::npos
                 ? link
                 : parent_dir(target) + "/" + link;
  }
  fail(path, "too many levels of symbolic links");
}

}  // namespace

void check_writable(const std::string& given) {
  if (given.empty()) throw UsageError("empty output path");
  const std::string path = write_target(given);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fail(given, "it is a directory");
  const std::string dir = parent_dir(path);
  if (::stat(dir.c_str(), &st) != 0) fail(given, "folder '" + dir + "' does not exist");
  if (!S_ISDIR(st.st_mode)) fail(given, "'" + dir + "' is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) fail(given, "folder '" + dir + "' is not writable");
}

void write_file_atomically(const std::string& given, const std::string& content) {
  check_writable(given);
  const std::string path = write_target(given);
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(given, std::strerror(errno));
  tmp = name.data();

  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(given, why);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a report is an ordinary file.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(given, why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    fail(given, why);
  }
}

}  // namespace gpulab
