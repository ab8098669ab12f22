// The lab options of `gpulab run`, as the command line parses and validates them: the lab,
// --variant selections, --size, --param NAME=VALUE, --threshold NAME=VALUE, the counter and
// timing options. Input: the lab's name on the first line, then option lines (fuzz_input.hpp):
//   v VARIANTS  s SIZE  p NAME=VALUE  t NAME=VALUE  m METRICS  r REPEAT  w WARMUP  S SEED
//   x REPLAY-MODE  c CACHE-CONTROL  f FORMAT
// A command line that passes every check goes on to open the device; the fuzzer hides every
// GPU, so it stops there with "no usable GPU" and never runs a lab.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_input.hpp"

namespace {

const std::map<char, std::string> kOptions{
    {'v', "variant"},     {'s', "size"},          {'p', "param"},  {'t', "threshold"},
    {'m', "metrics"},     {'r', "repeat"},        {'w', "warmup"}, {'S', "seed"},
    {'x', "replay-mode"}, {'c', "cache-control"}, {'f', "format"}};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("CUDA_VISIBLE_DEVICES", "", 1);  // before the CUDA runtime first looks
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gpulab::fuzz::Cli cli;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto eol = text.find('\n');
  const std::string lab(text.substr(0, eol));
  std::vector<std::string> args{"run"};
  const auto options = gpulab::fuzz::tagged_options(
      eol == std::string_view::npos ? "" : text.substr(eol + 1), kOptions);
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"--", lab});  // after "--", the lab cannot pass for an option
  const int code = cli.run(args);
  // Everything valid must have stopped at the (hidden) device, before any GPU work.
  if (code != static_cast<int>(gpulab::ExitCode::usage) &&
      code != static_cast<int>(gpulab::ExitCode::no_gpu))
    std::abort();
  return 0;
}
