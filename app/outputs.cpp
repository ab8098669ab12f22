#include "app/outputs.hpp"

#include <algorithm>

#include <functional>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/base/input_file.hpp"
#include "reports/base/output_file.hpp"
#include "reports/kernel_json.hpp"
#include "reports/render/escape.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/sweep_json.hpp"

namespace gpulab::app {

namespace {

// Clears `out` and says why where its content is past what gpulab reads back
// (reports/base/input_file.hpp) or where `more` finds a reason of its own; `hint` says what to do.
void refuse_unreadable(OutputFile& out, const JsonLimits& limits, const std::string& hint,
                       const std::function<void()>& more = {}) {
  try {
    if (out.content.size() > kMaxInputBytes)
      throw UsageError(
          fmt::format("more than {} MiB, the most gpulab reads", kMaxInputBytes >> 20));
    check_json_shape(out.content, "the report", limits);
    if (more) more();
  } catch (const UsageError& e) {
    out.refused = fmt::format("not writing '{}', which gpulab could not read back ({}); {}",
                              out.path, e.what(), hint);
    out.content.clear();
  }
}

}  // namespace

OutputFile report_file(const std::string& path, const report::Report& report,
                       const JsonLimits& limits) {
  OutputFile out{path, "", ""};
  if (path.empty()) return out;
  out.content = report::report_file_text(report);
  refuse_unreadable(out, limits, "profile fewer launches (--launch-count)", [&] {
    if (report::launch_bytes(report) > report::kMaxLaunchBytes)
      throw UsageError(fmt::format("its launches would take more than {} GiB once read",
                                   report::kMaxLaunchBytes >> 30));
  });
  return out;
}

OutputFile sweep_file(const std::string& path, const report::Sweep& sweep,
                      const JsonLimits& limits) {
  OutputFile out{path, "", ""};
  if (path.empty()) return out;
  out.content = report::sweep_file_text(sweep);
  refuse_unreadable(out, limits, "sweep fewer points or variants");
  return out;
}

int save_outputs(const std::vector<OutputFile>& files, Io& io, int code) {
  // What was printed goes out first: an output that is the same descriptor (/dev/stdout,
  // /proc/self/fd/1) gets the file after the text, not inside it.
  io.out.flush();
  io.err.flush();
  bool failed = false;
  for (const auto& file : files) {
    if (file.path.empty()) continue;
    if (!file.refused.empty()) {
      io.err << "gpulab: warning: " << report::terminal_safe(file.refused) << "\n";
      failed = true;
      continue;
    }
    try {
      write_output(file.path, file.content, io.out);
    } catch (const UsageError& e) {
      io.err << "gpulab: warning: " << report::terminal_safe(e.what()) << "\n";
      failed = true;
    }
  }
  return failed && code == 0 ? static_cast<int>(ExitCode::usage) : code;
}

Io text_io(Io& io, const std::vector<std::string>& output_paths) {
  const bool to_stdout = std::find(output_paths.begin(), output_paths.end(),
                                   std::string(kStandardStream)) != output_paths.end();
  if (to_stdout) return Io{io.err, io.err, io.progress, io.color, io.in, io.interactive};
  return io;
}

void refuse_two_standard_streams(const std::vector<std::string>& paths, const std::string& what) {
  if (std::count(paths.begin(), paths.end(), std::string(kStandardStream)) > 1)
    throw UsageError(fmt::format("'{}' (standard {}) can be given once", kStandardStream, what));
}

}  // namespace gpulab::app
