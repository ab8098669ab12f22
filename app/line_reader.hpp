// Where the shell's lines come from: libedit (prompt, editing, history, completion) on a
// terminal when gpulab was built with it, plain reads from a stream otherwise.
#pragma once

#include <istream>
#include <memory>
#include <optional>
#include <string>

namespace gpulab::app {

class LineReader {
 public:
  virtual ~LineReader() = default;
  // The next line without its newline; nullopt at the end of input. Ctrl-C (under an
  // InterruptScope) discards the line being typed and returns an empty one.
  virtual std::optional<std::string> read(const std::string& prompt) = 0;
  // Records a line in the history, and in its file when there is one.
  virtual void remember(const std::string& line) = 0;
};

// The most lines the history keeps, in memory and in its file (the oldest go first).
inline constexpr int kHistoryLines = 1000;

// A terminal reader when `interactive` and libedit is available: line editing, completion and
// a history that persists in `history_file` (may be empty: none) in libedit's own format, so
// that Up recalls earlier sessions' lines. A plain stream reader else, without history.
std::unique_ptr<LineReader> make_line_reader(std::istream& in, bool interactive,
                                             const std::string& history_file);

// Whether this build has line editing.
bool has_line_editing();

}  // namespace gpulab::app
