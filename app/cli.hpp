// The command line: one CLI11 app with a subcommand per command, parsed and run against a
// Session. main() and the interactive shell both go through dispatch().
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "app/session.hpp"

namespace gpulab::app {

struct Io {
  std::ostream& out;
  std::ostream& err;
  bool progress = false;     // progress lines on `err` (only when it is a terminal)
  bool color = false;        // ANSI colors in text output (a terminal, and NO_COLOR unset)
  std::istream* in = nullptr;  // the shell's input
  bool interactive = false;  // `in` is a terminal: prompt, line editing, completion
  // The terminal's width where `out` is one; 100 elsewhere (a file or a pipe has none).
  std::size_t columns = 100;
};

// Io for the process's standard streams, with colors and progress decided from the terminal
// and the NO_COLOR convention (https://no-color.org).
Io standard_io();

// Parses and runs one command line (without the program name). Never throws: an error is
// printed as one line on io.err ("gpulab: error: ...") and returned as an exit code (see
// ExitCode in reports/base/errors.hpp). `in_shell`: the line came from the shell, so a usage error
// points at the shell's `help CMD` rather than at `gpulab --help`.
int dispatch(const std::vector<std::string>& args, Session& session, Io& io, bool in_shell = false);

// Candidates for the word being typed (`partial`) after `words` (the words before it, command
// first): commands, options, labs, variants, metric sets. Used by the shell's tab completion
// and by `gpulab complete` for the bash and zsh completion scripts.
std::vector<std::string> complete(const std::vector<std::string>& words, const std::string& partial,
                                  bool in_shell);

// Whether the word being typed is a path: the value of an option whose type is FILE or DIR,
// the reports of compare and report, the program of profile and its arguments, the shell's
// `save FILE` and `set output DIR`. complete() offers no names there; completion offers the
// file system's, and nothing else where complete() has no candidate.
enum class PathKind { none, file, folder };
PathKind path_expected(const std::vector<std::string>& words, const std::string& partial,
                       bool in_shell);

// What `gpulab complete` prints, alone on its line, where path_expected says file or folder.
inline constexpr const char* kCompleteFiles = ":files";
inline constexpr const char* kCompleteFolders = ":folders";

}  // namespace gpulab::app
