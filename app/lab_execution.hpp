// What `run` and `diagnose LAB` share: the lab options, and running a lab into a report,
// diagnosed when asked (app/lab_execution.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "app/lab_runner.hpp"
#include "app/output_format.hpp"
#include "app/session.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/noise_stop.hpp"
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
  // Adaptive timing (reports/noise_stop.hpp): --max-noise (percent) turns it on for run and
  // diagnose; the others shape it.
  std::optional<double> max_noise_percent;
  std::optional<double> min_time_seconds;
  std::optional<double> timeout_seconds;
  std::optional<int> min_samples;
  bool all = false;
  bool verbose = false;  // also where each lab's wall time went (Report::phases)
  std::string json_path;
  std::string json_dir;
  OutputFormat format = OutputFormat::text;
};
void add_lab_options(CLI::App* cmd, RunOptions& options);

// The settings of a run of `options`: its --param values read, adaptive timing's rule where
// asked for (unless the settings already hold one), and every check that needs no lab run.
// Throws UsageError.
RunSettings lab_settings(const RunOptions& options);

// Runs the lab of `options` (its settings validated first, before the GPU is touched), diagnosed
// with --diagnose; the session remembers the report.
report::Report execute_lab(const RunOptions& options, Session& session, Io& io,
                           const std::vector<std::string>& argv);

// The adaptive timing that `options` ask for: nvbench's defaults where an option is not given;
// none when neither --max-noise nor `by_default` asks for it. Throws UsageError for --repeat
// together with adaptive timing, and for a rule option without it.
std::optional<report::NoiseRule> timing_rule(const RunOptions& options, bool by_default);

report::Thresholds parse_thresholds(const std::vector<std::string>& assignments);
// Diagnoses every kernel (those too small to, unless `asked`) and keeps, in each finding, only
// the labs this build has.
void diagnose_into(report::Report& report, const report::Thresholds& thresholds,
                   const report::KernelAsked& asked = {});
// What --kernel NAME asks the diagnosis for: the kernels it names; nothing when empty.
report::KernelAsked kernels_named(const std::string& name);

}  // namespace gpulab::app
