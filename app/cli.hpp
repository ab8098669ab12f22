// The command line: one CLI11 app with a subcommand per command, parsed and run against a
// Session. main() and the interactive shell both go through dispatch().
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "app/session.hpp"

namespace gpulab::app {

struct Io {
  std::ostream& out;
  std::ostream& err;
  bool progress = false;  // progress lines on `err` (only when it is a terminal)
};

// Parses and runs one command line (without the program name). Never throws: an error is
// printed as one line on io.err ("gpulab: error: ...") and returned as an exit code (see
// ExitCode in reports/errors.hpp).
int dispatch(const std::vector<std::string>& args, Session& session, Io& io);

}  // namespace gpulab::app
