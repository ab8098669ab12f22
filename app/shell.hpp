// `gpulab shell`: an interactive session that takes the same commands as the command line,
// plus a few of its own, and keeps one Session (device, roofs, profiler) for all of them.
#pragma once

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/session.hpp"

namespace gpulab::app {

// Reads commands from io.in until `quit` or the end of input (exit 0). With a terminal and
// libedit: a prompt, line editing, history kept in $XDG_STATE_HOME/gpulab/history (default
// ~/.local/state/gpulab/history) and tab completion; otherwise plain lines, no prompt.
int run_shell(Session& session, Io& io);

// Commands only the shell has: set, last, save, history, help, quit, exit.
const std::vector<std::string>& shell_builtins();

// Keys `set` accepts: size, repeat, metrics, format, output.
std::vector<std::string> shell_setting_names();

// Splits a line into words: whitespace separates, single and double quotes group, a backslash
// escapes the next character. Throws UsageError on an unterminated quote.
std::vector<std::string> split_words(const std::string& line);

}  // namespace gpulab::app
