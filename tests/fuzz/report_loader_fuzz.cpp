// The report loader: any bytes as a report file. A report either loads or is refused with a
// UsageError that names the problem; one that loads must save and load back unchanged (gpulab
// reads every report it writes): loaded back from the file it was saved to, it serializes to the
// same file. Any other exception, a sanitizer report or a differing round trip is a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/report.hpp"
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
  // The file as save_report writes it (to_json, 2-space indent, a newline), against the report
  // read back from it, serialized the same way.
  const std::string first = gpulab::read_file(saved.path());
  const std::string again =
      gpulab::report::to_json(gpulab::report::load_report(saved.path())).dump(2) + "\n";
  if (first != again) {
    std::fprintf(stderr, "round trip differs:\nsaved: %s\nreloaded: %s\n", first.c_str(),
                 again.c_str());
    std::abort();
  }
  return 0;
}
