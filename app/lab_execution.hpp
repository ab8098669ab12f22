// What `run` and `diagnose LAB` share: the lab options, and running a lab into a report,
// diagnosed when asked (app/lab_execution.cpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "app/lab_runner.hpp"
#include "app/output_format.hpp"
#include "app/session.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::app {

struct RunOptions {
  const CLI::App* command = nullptr;  // the subcommand parsed: which options were given
  std::string lab;
  RunSettings settings;
  std::vector<std::string> params;      // NAME=VALUE
  std::vector<std::string> thresholds;  // NAME=VALUE
  bool diagnose = false;
  bool all_findings = false;    // show every finding, not the first three
  std::string diagnose_kernel;  // diagnosed whatever its share of the time (diagnose --kernel)
  bool all = false;
  bool verbose = false;  // also where each lab's wall time went (Report::phases)
  std::string json_path;
  std::string json_dir;
  OutputFormat format = OutputFormat::text;
};
void add_lab_options(CLI::App* cmd, RunOptions& options);

// Runs the lab of `options` (its settings validated first, before the GPU is touched), diagnosed
// with --diagnose; the session remembers the report.
report::Report execute_lab(const RunOptions& options, Session& session, Io& io,
                           const std::vector<std::string>& argv);

report::Thresholds parse_thresholds(const std::vector<std::string>& assignments);
// Diagnoses every kernel (those too small to, unless `asked`) and keeps, in each finding, only
// the labs this build has.
void diagnose_into(report::Report& report, const report::Thresholds& thresholds,
                   const report::KernelAsked& asked = {});
// What --kernel NAME asks the diagnosis for: the kernels it names; nothing when empty.
report::KernelAsked kernels_named(const std::string& name);

}  // namespace gpulab::app
