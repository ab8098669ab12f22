// `gpulab compare`: two reports compared and rendered in every format (text through the
// command line, the others from the same comparisons), or one report's two variants.
// Input: report A, NUL, report B (empty: compare A's variants), then optionally a NUL and
// option lines (fuzz_input.hpp):
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
  std::vector<std::string> args{"compare", a.path()};
  if (two) args.push_back(b.path());
  args.push_back("--format=text");
  args.insert(args.end(), options.begin(), options.end());
  if (cli.run(args) == static_cast<int>(gpulab::ExitCode::usage)) return 0;
  // The other formats print the same comparisons, made once more from the options the command
  // line read (not once per format: loading and diagnosing both reports is most of the work).
  gpulab::app::CommandLine line;
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 pops from the back
  line.app.parse(reversed);
  const auto comparisons = gpulab::app::comparisons_of(line.compare);
  using gpulab::app::OutputFormat;
  for (OutputFormat format : {OutputFormat::markdown, OutputFormat::json, OutputFormat::csv})
    gpulab::app::print_comparisons(comparisons, format, cli.fresh_io());
  return 0;
}
