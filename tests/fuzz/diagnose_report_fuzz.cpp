// `gpulab diagnose --report FILE`: load, diagnose and render in every format.
// Input: the report, then optionally a NUL and option lines (fuzz_input.hpp):
//   v VARIANTS   --variant       k KERNEL   --kernel       t NAME=VALUE   --threshold
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gpulab::fuzz::Cli cli;
  static gpulab::fuzz::InputFile report("report");
  const auto parts = gpulab::fuzz::split_parts({reinterpret_cast<const char*>(data), size});
  const auto options = gpulab::fuzz::tagged_options(
      parts.size() > 1 ? parts[1] : "", {{'v', "variant"}, {'k', "kernel"}, {'t', "threshold"}});
  report.write(parts[0]);
  for (const char* format : {"text", "markdown", "json", "csv"}) {
    std::vector<std::string> args{"diagnose", "--report", report.path(),
                                  std::string("--format=") + format};
    args.insert(args.end(), options.begin(), options.end());
    // The same input is refused alike in every format: once is enough.
    if (cli.run(args) == static_cast<int>(gpulab::ExitCode::usage)) break;
  }
  return 0;
}
