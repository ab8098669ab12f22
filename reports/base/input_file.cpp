#include "reports/base/input_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "reports/base/errors.hpp"

namespace gpulab {

std::string read_file(const std::string& path, std::size_t max_bytes) {
  const auto cannot = [&](const std::string& why) {
    return UsageError("cannot read '" + path + "': " + why);
  };
  // "-" is standard input, read as a pipe is and left open.
  const bool standard_input = path == "-";
  const int fd = standard_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw cannot(std::strerror(errno));
  const auto close_file = [&] {
    if (!standard_input) ::close(fd);
  };
  const auto too_large = [&] {
    close_file();
    return cannot(fmt::format("more than {} MiB, the most gpulab reads", max_bytes >> 20));
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close_file();
    throw cannot("it is a directory");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) throw too_large();
  // Read straight into the text: a regular file in one piece of its size (and one byte more,
  // to see the end or a file that grew), a pipe, a device or a file of no stated size (/proc)
  // in pieces of 64 KiB.
  const std::size_t piece = S_ISREG(st.st_mode) && st.st_size > 0
                                ? static_cast<std::size_t>(st.st_size) + 1
                                : std::size_t{1} << 16;
  std::string text;
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) text.resize(used + piece);
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      close_file();
      throw cannot(why);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > max_bytes) throw too_large();
  }
  close_file();
  text.resize(used);
  return text;
}

void check_json_depth(const std::string& text, const std::string& what) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character, whatever it is
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw UsageError(
            fmt::format("{}: JSON nested deeper than {} levels (at byte {}), more "
                        "than any report of gpulab's",
                        what, kMaxJsonDepth, i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace gpulab
