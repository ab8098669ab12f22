// `gpulab compare`: two reports compared and rendered in every format, or one report's two
// variants. Input: report A, NUL, report B (empty: compare A's variants), then optionally a NUL
// and option lines (fuzz_input.hpp):
//   V A,B   --variants       m METRICS   --metrics       r PCT   --fail-on-regression
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gpulab::fuzz::Cli cli;
  static gpulab::fuzz::InputFile a("a"), b("b");
  const auto parts = gpulab::fuzz::split_parts({reinterpret_cast<const char*>(data), size});
  const bool two = parts.size() > 1 && !parts[1].empty();
  const auto options = gpulab::fuzz::tagged_options(
      parts.size() > 2 ? parts[2] : "",
      {{'V', "variants"}, {'m', "metrics"}, {'r', "fail-on-regression"}});
  a.write(parts[0]);
  if (two) b.write(parts[1]);
  for (const char* format : {"text", "markdown", "json", "csv"}) {
    std::vector<std::string> args{"compare", a.path()};
    if (two) args.push_back(b.path());
    args.push_back(std::string("--format=") + format);
    args.insert(args.end(), options.begin(), options.end());
    // The same input is refused alike in every format: once is enough.
    if (cli.run(args) == static_cast<int>(gpulab::ExitCode::usage)) break;
  }
  return 0;
}
