// What the fuzz targets share: turning one fuzz input into the files and the command line a
// user would give gpulab.
//
// Inputs come in parts separated by NUL bytes. A report is JSON, which has no raw NUL, so a
// seed made of two fixture reports joined by a NUL is a well-formed input from the start.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli.hpp"
#include "app/command_line.hpp"
#include "app/commands.hpp"
#include "reports/base/errors.hpp"
#include "reports/report.hpp"

namespace gpulab::fuzz {

// The parts of `data` between NULs; always at least one, possibly empty.
inline std::vector<std::string_view> split_parts(std::string_view data) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (auto nul = data.find('\0'); nul != std::string_view::npos; nul = data.find('\0', start)) {
    parts.push_back(data.substr(start, nul - start));
    start = nul + 1;
  }
  parts.push_back(data.substr(start));
  return parts;
}

// A file of this process's own under $TMPDIR, rewritten for each input: the commands read
// reports from paths, so the input reaches them the way a user's file does.
class InputFile {
 public:
  explicit InputFile(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/gpulab-fuzz-" + name + "-XXXXXX";
    const int fd = ::mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("cannot create " + path_);
    ::close(fd);
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }

  // Returns path().
  const std::string& write(std::string_view bytes) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path_);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

// Options from lines "T VALUE": the tag character T picks an option of `options` (lines with
// other tags are skipped), and the rest of the line after one character is its value, passed as
// "--option=VALUE". A value can so never become an option of its own (say --json, which
// would write files wherever the input pointed).
inline std::vector<std::string> tagged_options(std::string_view lines,
                                               const std::map<char, std::string>& options) {
  std::vector<std::string> args;
  while (!lines.empty()) {
    const auto end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    lines = end == std::string_view::npos ? std::string_view() : lines.substr(end + 1);
    if (line.empty()) continue;
    const auto option = options.find(line[0]);
    if (option == options.end()) continue;
    // An empty value is left out: CLI11 reads "--option=" as an option without its value and
    // takes the next word for it, which could be the "--" before a positional argument.
    if (line.size() <= 2) continue;
    args.push_back("--" + option->second + "=" + std::string(line.substr(2)));
  }
  return args;
}

// gpulab's command line, as main() runs it, with its output kept in memory. dispatch() turns
// gpulab's own errors into their exit codes and anything else into ExitCode::internal: from
// input alone that is a bug (an exception the code did not expect), so it ends the run as a
// crash, with what the command printed.
class Cli {
 public:
  Cli() { io_.color = true; }  // the text renderers' colored paths too

  int run(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    const int code = app::dispatch(args, session_, io_);
    if (code == static_cast<int>(ExitCode::internal)) {
      std::fprintf(stderr, "gpulab exited with an internal error:\n%s", err_.str().c_str());
      std::abort();
    }
    return code;
  }

  // The report the last command left in the session (diagnose's: diagnosed).
  const report::Report& last_report() const {
    const report::Report* report = session_.last_report();
    if (!report) {
      std::fprintf(stderr, "the command left no report in the session\n");
      std::abort();
    }
    return *report;
  }

  // The Io the commands print to, emptied: for printing a result again in another format.
  app::Io& fresh_io() {
    out_.str("");
    err_.str("");
    return io_;
  }

 private:
  app::Session session_;  // opens no device until a command needs one
  std::ostringstream out_, err_;
  app::Io io_{out_, err_};
};

}  // namespace gpulab::fuzz
