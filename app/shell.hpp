// `gpulab shell`: an interactive session that takes the same commands as the command line,
// plus a few of its own, and keeps one Session (device, roofs, profiler) for all of them.
#pragma once

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/session.hpp"

namespace gpulab::app {

// Reads commands from io.in until `quit`, `exit` or the end of input. On a terminal: a prompt,
// Ctrl-C stops the running command (or clears the line) and the shell goes on, exit status 0;
// with libedit also line editing, tab completion and a history of the last kHistoryLines lines
// in $XDG_STATE_HOME/gpulab/history (default ~/.local/state/gpulab/history). Otherwise (a
// script): plain lines, no prompt, every line runs, and the exit status is the first failing
// line's (0 when none failed).
int run_shell(Session& session, Io& io);

// Commands only the shell has: set, last, save, history, help, quit, exit.
const std::vector<std::string>& shell_builtins();

// Keys `set` accepts: size, repeat, metrics, format, output. A value is checked by the
// validators of the option it stands for, and applies only to the commands that accept it.
std::vector<std::string> shell_setting_names();

// Splits a line into words: whitespace separates, single and double quotes group, a backslash
// escapes the next character. Throws UsageError on an unterminated quote.
std::vector<std::string> split_words(const std::string& line);

}  // namespace gpulab::app
