#include "reports/base/output_file.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/base/errors.hpp"

namespace gpulab {
namespace {

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// strerror's text as the rest of a message: "no space left on device".
std::string reason(int error) {
  std::string text = std::strerror(error);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw UsageError("cannot write '" + path + "': " + what);
}

// The kernel's fs.protected_symlinks rule for following `link` (lstat'ed as `st`): in a sticky,
// world-writable folder, only a link owned by the caller or by the folder's owner is followed,
// so that another user's link planted in /tmp cannot aim gpulab's write at the caller's files.
void refuse_planted_link(const std::string& given, const std::string& link, const struct stat& st) {
  const std::string dir = parent_dir(link);
  struct stat folder {};
  if (::stat(dir.c_str(), &folder) != 0) return;
  const bool shared = (folder.st_mode & S_ISVTX) && (folder.st_mode & S_IWOTH);
  if (shared && st.st_uid != ::geteuid() && st.st_uid != folder.st_uid)
    fail(given, "'" + link +
                    "' is a symbolic link of another user in the sticky, world-writable "
                    "folder '" +
                    dir + "': not followed (as the kernel's fs.protected_symlinks)");
}

// /proc/self/fd/N and its aliases name an open file description, not a path: the kernel opens
// what the descriptor has open, which no readlink text can name (pipe:[123]).
bool is_descriptor_link(const std::string& path) {
  return path.rfind("/proc/", 0) == 0 || path.rfind("/dev/fd/", 0) == 0;
}

enum class Kind { absent, regular, in_place };

struct Destination {
  std::string path;  // after symbolic links
  Kind kind = Kind::absent;
  struct stat st {};  // of `path` where it exists
};

// Follows symbolic links to the file a write to `given` lands in, as a shell's `>` does (an
// existing target or not), and says how it is written.
Destination destination_of(const std::string& given) {
  if (given.empty()) throw UsageError("empty output path");
  Destination d{given};
  for (int hops = 0; hops < 40; ++hops) {
    if (is_descriptor_link(d.path)) {
      d.kind = Kind::in_place;
      return d;
    }
    if (::lstat(d.path.c_str(), &d.st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) fail(given, reason(errno));
      d.kind = Kind::absent;
      return d;
    }
    if (S_ISDIR(d.st.st_mode)) fail(given, "it is a directory");
    if (!S_ISLNK(d.st.st_mode)) {
      d.kind = S_ISREG(d.st.st_mode) ? Kind::regular : Kind::in_place;
      return d;
    }
    refuse_planted_link(given, d.path, d.st);
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(d.path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) fail(given, reason(errno));
    const std::string link(buf.data(), static_cast<std::size_t>(n));
    d.path = link[0] == '/' || d.path.find('/') == std::string::npos
                 ? link
                 : parent_dir(d.path) + "/" + link;
  }
  fail(given, "too many levels of symbolic links");
}

// The errno of the first failing write, or 0.
int write_all(int fd, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

// A device, FIFO, socket or descriptor: opened and written, never replaced. A regular file
// reached through a descriptor link is appended to: the descriptor is shared with what the
// process (or its shell) wrote there before, as `>> /dev/stdout` would.
void write_in_place(const std::string& given, const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(given, reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) ::lseek(fd, 0, SEEK_END);
  const int error = write_all(fd, content);
  if (::close(fd) != 0 && error == 0 && errno != EINTR) fail(given, reason(errno));
  if (error != 0) fail(given, reason(error));
}

mode_t current_umask() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// A regular file, or none: a temporary file beside it with the mode (and, where the caller may
// keep it, the owner) the file has or would get, flushed, then renamed over it.
void replace(const std::string& given, const Destination& d, const std::string& content) {
  std::string tmp = parent_dir(d.path) + "/.gpulab-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(given, reason(errno));
  const auto give_up = [&](int error) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(given, reason(error));
  };
  if (d.kind == Kind::regular) {
    // The owner first: chown clears the set-user-ID bits that fchmod then restores. Where the
    // caller may not give the file to its owner, it becomes the caller's, as with cp.
    if (::fchown(fd, d.st.st_uid, d.st.st_gid) != 0) {
      [[maybe_unused]] const int ignored = ::fchown(fd, static_cast<uid_t>(-1), d.st.st_gid);
    }
    if (::fchmod(fd, d.st.st_mode & 07777) != 0) give_up(errno);
  } else if (::fchmod(fd, 0666 & ~current_umask()) != 0) {  // mkstemp made it 0600
    give_up(errno);
  }
  if (const int error = write_all(fd, content)) give_up(error);
  if (::fsync(fd) != 0) give_up(errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(given, reason(error));
  }
  // Never renamed over what is not a regular file, should one have taken the name meanwhile.
  struct stat now {};
  if (::lstat(d.path.c_str(), &now) == 0 && !S_ISREG(now.st_mode)) {
    ::unlink(tmp.c_str());
    fail(given, "it stopped being a regular file while being written");
  }
  if (::rename(tmp.c_str(), d.path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    fail(given, reason(error));
  }
}

}  // namespace

void check_output(const std::string& given) {
  if (given == kStandardStream) return;
  const Destination d = destination_of(given);
  if (d.kind == Kind::in_place) {
    if (::access(d.path.c_str(), W_OK) != 0) fail(given, reason(errno));
    return;
  }
  const std::string dir = parent_dir(d.path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail(given, "folder '" + dir + "' does not exist");
  if (!S_ISDIR(st.st_mode)) fail(given, "'" + dir + "' is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) fail(given, "folder '" + dir + "' is not writable");
}

void write_output(const std::string& given, const std::string& content,
                  std::ostream& standard_output) {
  if (given == kStandardStream) {
    standard_output << content;
    standard_output.flush();
    if (!standard_output) fail(given, "standard output refused the write");
    return;
  }
  check_output(given);
  const Destination d = destination_of(given);
  if (d.kind == Kind::in_place)
    write_in_place(given, d.path, content);
  else
    replace(given, d, content);
}

}  // namespace gpulab
