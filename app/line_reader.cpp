#include "app/line_reader.hpp"

#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "app/cli.hpp"
#include "app/interrupt.hpp"
#include "app/shell.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/base/output_file.hpp"

#ifdef GPULAB_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace gpulab::app {
namespace {

class StreamReader final : public LineReader {
 public:
  explicit StreamReader(std::istream& in) : in_(in) {}
  std::optional<std::string> read(const std::string& prompt) override {
    if (!prompt.empty()) {
      std::fputs(prompt.c_str(), stdout);
      std::fflush(stdout);
    }
    std::string line;
    if (std::getline(in_, line)) return line;
    if (!take_interrupt()) return std::nullopt;
    // Ctrl-C interrupted the read (it fails the stream like an end of input): a new line.
    in_.clear();
    std::clearerr(stdin);
    std::fputs("\n", stdout);
    return std::string();
  }
  void remember(const std::string& /*line*/) override {}  // nothing can recall it

 private:
  std::istream& in_;
};

#ifdef GPULAB_HAVE_LIBEDIT
// libedit's completion hooks are C callbacks without a context pointer: the candidates of the
// current completion live here between the calls.
std::vector<std::string> g_candidates;

char* next_candidate(const char* /*text*/, int state) {
  static std::size_t index = 0;
  if (state == 0) index = 0;
  if (index >= g_candidates.size()) return nullptr;
  return strdup(g_candidates[index++].c_str());
}

char** complete_line(const char* text, int start, int /*end*/) {
  const std::string before(rl_line_buffer, static_cast<std::size_t>(start));
  std::vector<std::string> words;
  try {
    words = split_words(before);
  } catch (const std::exception&) {
    return nullptr;  // inside an open quote: no completion
  }
  g_candidates = complete(words, text, true);
  // libedit's own completion is of file names: only where a path belongs, never in place of
  // a name that matched nothing (a threshold, a number).
  if (g_candidates.empty() && path_expected(words, text, true) != PathKind::none) return nullptr;
  rl_attempted_completion_over = 1;
  if (g_candidates.empty()) return nullptr;
  return rl_completion_matches(text, next_candidate);
}

// libedit's keys come through here, so that Ctrl-C ends the line being edited: readline then
// returns and read() discards the line. SIGINT stays blocked but while ppoll waits, so a Ctrl-C
// cannot fall between the check of the flag and the wait (and go unseen until the next key).
int read_key(FILE* in) {
  sigset_t sigint, before;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  ::pthread_sigmask(SIG_BLOCK, &sigint, &before);
  sigset_t waiting = before;
  sigdelset(&waiting, SIGINT);
  int key = EOF;
  while (!interrupt_pending()) {
    pollfd ready{fileno(in), POLLIN, 0};
    const int n = ::ppoll(&ready, 1, nullptr, &waiting);
    if (n < 0 && errno == EINTR) continue;  // the loop's check decides
    unsigned char c = 0;
    if (n > 0 && ::read(fileno(in), &c, 1) == 1) key = c;
    break;  // a key, the end of input or an error
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return key;
}

// Writes the history in libedit's own format (what read_history loads) through write_output,
// as every output is written: libedit writes only to a path, so it writes a private file first
// (mode 0600, in TMPDIR), which is read back and removed. Best effort: no history file is not
// an error.
void save_history(const std::string& path) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmp = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gpulab-history-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return;
  ::close(fd);
  std::string content;
  const bool written = write_history(tmp.c_str()) == 0;
  try {
    if (written) content = read_file(tmp);
  } catch (const UsageError&) {
  }
  ::unlink(tmp.c_str());
  if (content.empty()) return;
  try {
    std::ostringstream not_a_terminal;  // "-" names no history file
    write_output(path, content, not_a_terminal);
  } catch (const UsageError&) {
  }
}

// Loads the history file; a file of plain lines (what gpulab wrote before it used libedit's
// format) is taken line by line, and the next save rewrites it in libedit's format.
void load_history(const std::string& path) {
  if (read_history(path.c_str()) == 0) return;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) add_history(line.c_str());
}

class EditlineReader final : public LineReader {
 public:
  explicit EditlineReader(std::string history_file) : history_file_(std::move(history_file)) {
    rl_readline_name = "gpulab";
    rl_attempted_completion_function = complete_line;
    rl_catch_signals = 0;  // SIGINT is the shell's (app/interrupt.hpp), not libedit's
    rl_getc_function = read_key;
    using_history();
    stifle_history(kHistoryLines);
    if (!history_file_.empty()) load_history(history_file_);
  }
  std::optional<std::string> read(const std::string& prompt) override {
    char* raw = readline(prompt.c_str());
    if (take_interrupt()) {  // Ctrl-C: drop what was typed, a fresh prompt
      std::free(raw);
      std::fputs("\n", stdout);
      return std::string();
    }
    if (!raw) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  }
  void remember(const std::string& line) override {
    add_history(line.c_str());
    if (!history_file_.empty()) save_history(history_file_);
  }

 private:
  std::string history_file_;
};
#endif

}  // namespace

bool has_line_editing() {
#ifdef GPULAB_HAVE_LIBEDIT
  return true;
#else
  return false;
#endif
}

std::unique_ptr<LineReader> make_line_reader(std::istream& in, [[maybe_unused]] bool interactive,
                                             [[maybe_unused]] const std::string& history_file) {
#ifdef GPULAB_HAVE_LIBEDIT
  if (interactive) return std::make_unique<EditlineReader>(history_file);
#endif
  return std::make_unique<StreamReader>(in);
}

}  // namespace gpulab::app
