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
  // The next line without its newline; nullopt at the end of input.
  virtual std::optional<std::string> read(const std::string& prompt) = 0;
  // Records a line in the history (and its file, when there is one).
  virtual void remember(const std::string& line) = 0;
};

// A terminal reader when `interactive` and libedit is available; a plain stream reader else.
// `history_file` may be empty (no history file).
std::unique_ptr<LineReader> make_line_reader(std::istream& in, bool interactive,
                                             const std::string& history_file);

// Whether this build has line editing.
bool has_line_editing();

}  // namespace gpulab::app
