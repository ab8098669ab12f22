// gpulab: CUDA optimization labs measured with hardware counters. See README.md.
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "app/cli.hpp"
#include "reports/base/errors.hpp"

int main(int argc, char** argv) {
  try {
    gpulab::app::Session session;
    gpulab::app::Io io = gpulab::app::standard_io();
    std::vector<std::string> args(argv + 1, argv + argc);
    // `gpulab` alone on a terminal is the interactive shell.
    if (args.empty() && io.interactive && ::isatty(STDOUT_FILENO) == 1) args = {"shell"};
    return gpulab::app::dispatch(args, session, io);
  } catch (const std::exception& e) {  // e.g. a failure while tearing the session down
    std::cerr << "gpulab: internal error: " << e.what() << "\n";
    return static_cast<int>(gpulab::ExitCode::internal);
  }
}
