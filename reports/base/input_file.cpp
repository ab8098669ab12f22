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
  if (!standard_input && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
    close_file();
    throw cannot("it is a device, not a file");
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

namespace {

// "32 million", "10".
std::string how_many(std::size_t n) {
  return n >= 1'000'000 && n % 1'000'000 == 0 ? fmt::format("{} million", n / 1'000'000)
                                              : std::to_string(n);
}

}  // namespace

void check_json_shape(const std::string& text, const std::string& what, const JsonLimits& limits) {
  int depth = 0;
  std::size_t values = 1, members = 0;
  const auto refuse = [&](const std::string& problem) {
    throw UsageError(
        fmt::format("{}: {}, the most gpulab reads (docs/report-schema.md)", what, problem));
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;  // the escaped character, whatever it is
      if (i - start - 1 > limits.string_bytes)
        refuse(fmt::format("a string longer than {} bytes (at byte {})",
                           how_many(limits.string_bytes), start));
    } else if (c == '[' || c == '{') {
      if (++depth > limits.depth)
        refuse(fmt::format("JSON nested deeper than {} levels (at byte {})", limits.depth, i));
      ++values;  // its first element or member, if any: a bound, not a count
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      if (++values > limits.values)
        refuse(fmt::format("more than {} JSON values (at byte {})", how_many(limits.values), i));
    } else if (c == ':') {
      if (++members > limits.members)
        refuse(
            fmt::format("more than {} object members (at byte {})", how_many(limits.members), i));
    }
  }
}

}  // namespace gpulab
