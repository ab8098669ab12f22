// The manual: examples of each command, the exit-code table and the man page, all made from the
// CLI11 app itself and from kExitCodes (reports/base/errors.hpp), so that neither `--help` nor
// gpulab.1 can drift from the options the commands take. The build runs `gpulab man` to write
// gpulab.1, and `cmake --install` puts it in share/man/man1.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"

namespace gpulab::app {

struct Example {
  const char* command;  // the subcommand it shows ("" for none)
  const char* line;     // the command line, "gpulab ..." (tests parse each one)
  const char* what;     // what it does, one line
};

// Every example, grouped by command in the order of `gpulab --help`.
const std::vector<Example>& examples();

// "Examples:" and the examples of `command` ("" for all), for a --help footer.
std::string examples_text(const std::string& command);

// "Exit codes:" and one line per code, for a --help footer.
std::string exit_codes_text();

// Puts examples and exit codes into the footers of `app` (the root: a few examples and the
// whole exit-code table) and of its visible subcommands (their examples).
void add_manual_footers(CLI::App& app);

// gpulab.1: the root's visible subcommands with their options and help texts, the examples,
// the exit codes, the environment and files, as roff for man(1).
std::string man_page(const CLI::App& app);

// `gpulab man`: hidden from --help; prints man_page().
CLI::App* add_man(CLI::App& root);
int run_man(const CLI::App& app, Io& io);

}  // namespace gpulab::app
