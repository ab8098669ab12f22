// gpulab: CUDA optimization labs measured with hardware counters. See README.md.
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "app/cli.hpp"
#include "reports/errors.hpp"

int main(int argc, char** argv) {
  try {
    gpulab::app::Session session;
    gpulab::app::Io io{std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1};
    return gpulab::app::dispatch(std::vector<std::string>(argv + 1, argv + argc), session, io);
  } catch (const std::exception& e) {  // e.g. a failure while tearing the session down
    std::cerr << "gpulab: internal error: " << e.what() << "\n";
    return static_cast<int>(gpulab::ExitCode::internal);
  }
}
