// `gpulab diagnose --report FILE`: load, diagnose and render in every format (text through
// the command line, the others from the report it diagnosed).
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
  std::vector<std::string> args{"diagnose", "--report", report.path(), "--format=text"};
  args.insert(args.end(), options.begin(), options.end());
  if (cli.run(args) == static_cast<int>(gpulab::ExitCode::usage)) return 0;
  // The other formats print the same diagnosed report: loading and diagnosing it again for
  // each would only repeat the work (the diagnosis is a function of the report and options).
  using gpulab::app::OutputFormat;
  for (OutputFormat format : {OutputFormat::markdown, OutputFormat::json, OutputFormat::csv})
    gpulab::app::print_diagnosis(cli.last_report(), format, cli.fresh_io());
  return 0;
}
