#include "app/record_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include <cstring>

#include "reports/base/errors.hpp"

namespace gpulab::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "gpulab-profile-";
constexpr const char* kOwnerFile = ".owner";
// A folder without an owner file is a run's being made (between mkdtemp and the rename below),
// or one that died in that instant: after an hour it is the latter.
constexpr std::time_t kOwnerlessAge = 3600;

bool stale(const std::string& folder, const struct stat& st) {
  const int fd = ::open((folder + "/" + kOwnerFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT && std::time(nullptr) - st.st_mtime > kOwnerlessAge;
  const bool nobody_holds_it = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return nobody_holds_it;
}

}  // namespace

std::string record_folders_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

std::vector<std::string> remove_stale_record_folders(const std::string& parent) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    struct stat st {};
    const std::string folder = entry.path().string();
    // Only this user's folders, and never through a link.
    if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    if (!stale(folder, st)) continue;
    std::error_code removal;
    fs::remove_all(folder, removal);
    if (!removal) removed.push_back(folder);
  }
  return removed;
}

RecordFolder::RecordFolder() {
  const std::string parent = record_folders_parent();
  remove_stale_record_folders(parent);
  std::string pattern = parent + "/" + kPrefix + "XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw UsageError(
        fmt::format("cannot create a folder for the records under {} (set TMPDIR)", parent));
  path_ = pattern;
  // Locked under another name, then renamed: an `.owner` file is never seen unheld.
  const std::string fresh = path_ + "/.owner.new";
  owner_ = ::open(fresh.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (owner_ < 0 || ::flock(owner_, LOCK_EX) != 0 ||
      ::rename(fresh.c_str(), (path_ + "/" + kOwnerFile).c_str()) != 0) {
    const int error = errno;
    remove();
    throw UsageError(
        fmt::format("cannot lock the record folder under {}: {}", parent, std::strerror(error)));
  }
}

RecordFolder::~RecordFolder() { remove(); }

void RecordFolder::remove() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  if (owner_ >= 0) ::close(owner_);
  owner_ = -1;
  path_.clear();
}

namespace {

// One record file, line by line, without following a link or waiting on a FIFO, and at most
// kMaxRecordFileBytes of it: the program writes the folder, and what it writes is untrusted.
void read_record_file(const std::string& path, const std::string& name, report::RecordSet& into) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) ::close(fd);
    into.not_read.push_back(name + ": not a plain file");
    return;
  }
  std::string pending;
  std::size_t total = 0;
  char chunk[1 << 16];
  report::RecordReader reader;
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const std::size_t take =
        std::min(static_cast<std::size_t>(n), report::kMaxRecordFileBytes - total);
    total += take;
    pending.append(chunk, take);
    std::size_t start = 0;
    for (std::size_t end; (end = pending.find('\n', start)) != std::string::npos; start = end + 1)
      reader.read(std::string_view(pending).substr(start, end - start), into);
    pending.erase(0, start);
    if (total == report::kMaxRecordFileBytes) {
      into.not_read.push_back(
          fmt::format("{}: past {} MiB, the most gpulab reads of a record "
                      "file",
                      name, report::kMaxRecordFileBytes >> 20));
      pending.clear();
      break;
    }
  }
  reader.read(pending, into);  // a last line without its newline
  ::close(fd);
}

}  // namespace

report::RecordSet RecordFolder::read() const {
  report::RecordSet records;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // the folder's own lock file
    read_record_file(entry.path().string(), name, records);
  }
  return records;
}

}  // namespace gpulab::app
