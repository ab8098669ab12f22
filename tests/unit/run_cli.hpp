// Runs a gpulab command line in-process, as main() would, on a fresh Session, and keeps what it
// printed: for the CPU tests of the commands.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "app/session.hpp"

namespace gpulab::test {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  app::Session session;
  std::ostringstream out, err;
  app::Io io{out, err, false};
  const int code = app::dispatch(args, session, io);
  return {code, out.str(), err.str()};
}

}  // namespace gpulab::test
