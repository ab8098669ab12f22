#include "app/line_reader.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "app/cli.hpp"
#include "app/shell.hpp"

#ifdef GPULAB_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace gpulab::app {
namespace {

void append_to_file(const std::string& path, const std::string& line) {
  if (path.empty()) return;
  std::ofstream out(path, std::ios::app);
  out << line << "\n";  // best effort: a history file that cannot be written is not an error
}

class StreamReader final : public LineReader {
 public:
  StreamReader(std::istream& in, std::string history_file)
      : in_(in), history_file_(std::move(history_file)) {}
  std::optional<std::string> read(const std::string& prompt) override {
    if (!prompt.empty()) {
      std::fputs(prompt.c_str(), stdout);
      std::fflush(stdout);
    }
    std::string line;
    if (!std::getline(in_, line)) return std::nullopt;
    return line;
  }
  void remember(const std::string& line) override { append_to_file(history_file_, line); }

 private:
  std::istream& in_;
  std::string history_file_;
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
  if (g_candidates.empty()) return nullptr;  // fall back to file names
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, next_candidate);
}

class EditlineReader final : public LineReader {
 public:
  explicit EditlineReader(std::string history_file) : history_file_(std::move(history_file)) {
    rl_readline_name = "gpulab";
    rl_attempted_completion_function = complete_line;
    using_history();
    if (!history_file_.empty()) read_history(history_file_.c_str());
  }
  std::optional<std::string> read(const std::string& prompt) override {
    char* raw = readline(prompt.c_str());
    if (!raw) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  }
  void remember(const std::string& line) override {
    add_history(line.c_str());
    append_to_file(history_file_, line);
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

std::unique_ptr<LineReader> make_line_reader(std::istream& in, bool interactive,
                                             const std::string& history_file) {
#ifdef GPULAB_HAVE_LIBEDIT
  if (interactive) return std::make_unique<EditlineReader>(history_file);
#endif
  return std::make_unique<StreamReader>(in, interactive ? history_file : std::string());
}

}  // namespace gpulab::app
