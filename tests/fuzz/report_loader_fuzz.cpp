// The report loader: any bytes as a report file. A report either loads or is refused with a
// UsageError that names the problem; one that loads must save and load back unchanged (gpulab
// reads every report it writes). Any other exception, a sanitizer report or a differing
// round trip is a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "reports/errors.hpp"
#include "reports/report_json.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gpulab::fuzz::InputFile input("report"), saved("saved");
  gpulab::report::Report report;
  try {
    report = gpulab::report::load_report(input.write({reinterpret_cast<const char*>(data), size}));
  } catch (const gpulab::UsageError&) {
    return 0;
  }
  gpulab::report::save_report(saved.path(), report);
  const auto first = gpulab::report::to_json(report).dump();
  const auto again = gpulab::report::to_json(gpulab::report::load_report(saved.path())).dump();
  if (first != again) {
    std::fprintf(stderr, "round trip differs:\nloaded: %s\nreloaded: %s\n", first.c_str(),
                 again.c_str());
    std::abort();
  }
  return 0;
}
