// A command's output files, saved once its work is done and its text report printed: a save
// that fails then (a full disk, a folder removed meanwhile) costs one warning line and the
// usage exit code, never the report. Where one output is standard output ("-"), the text
// report goes to stderr, so that stdout carries that file alone.
#pragma once

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "reports/base/input_file.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {
struct Sweep;
}

namespace gpulab::app {

struct OutputFile {
  std::string path;  // as the user gave it; "-" is standard output
  std::string content;
  std::string refused;  // why it is not written, when it is not
};

// The file --json saves for `report` (nothing when `path` is empty: no file asked for). A
// report past what gpulab reads back (`limits`, reports/base/input_file.hpp) is refused, not
// written.
OutputFile report_file(const std::string& path, const report::Report& report,
                       const JsonLimits& limits = {});

// The file --json saves for a sweep, refused as report_file refuses a report past what gpulab
// reads back.
OutputFile sweep_file(const std::string& path, const report::Sweep& sweep,
                      const JsonLimits& limits = {});

// Writes each file through write_output (reports/base/output_file.hpp); a failure is one line
// "gpulab: warning: cannot write 'PATH': ..." on io.err. Returns `code`, or ExitCode::usage
// when a save failed and `code` is 0 (a failed check or regression keeps its own code).
int save_outputs(const std::vector<OutputFile>& files, Io& io, int code = 0);

// The Io a command prints its text report to: `io`, with stdout swapped for stderr when one
// of `output_paths` is standard output.
Io text_io(Io& io, const std::vector<std::string>& output_paths);

// Throws UsageError when more than one of `paths` (option names beside them) is "-": standard
// output (or input) can carry one file.
void refuse_two_standard_streams(const std::vector<std::string>& paths, const std::string& what);

}  // namespace gpulab::app
