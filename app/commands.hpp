// One options struct and two functions per command: add_* declares the subcommand and its
// options on the CLI11 app (parse), run_* validates and runs it (validate, run), returning the
// exit code. Commands stay thin: the work lives in Session, labs/ and reports/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "app/lab_execution.hpp"
#include "app/lab_runner.hpp"
#include "app/output_format.hpp"
#include "app/report_printing.hpp"
#include "reports/diagnosis/compare.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/render/style.hpp"

namespace gpulab::app {

// The values of info's --format (every other command prints every format).
inline const std::vector<OutputFormat> kInfoFormats = {OutputFormat::text, OutputFormat::json};

struct ListOptions {
  std::string json_path;
  OutputFormat format = OutputFormat::text;
  bool metrics = false;  // list the metric catalogue instead of the labs
  bool rules = false;    // list the diagnosis rules and thresholds instead of the labs
};
CLI::App* add_list(CLI::App& root, ListOptions& options);
int run_list(const ListOptions& options, Io& io);

struct InfoOptions {
  std::string json_path;
  OutputFormat format = OutputFormat::text;
  std::string check_metrics;  // a metric set or list to check for support on this device
};
CLI::App* add_info(CLI::App& root, InfoOptions& options);
int run_info(const InfoOptions& options, Session& session, Io& io);

CLI::App* add_run(CLI::App& root, RunOptions& options);
int run_run(RunOptions& options, Session& session, Io& io, const std::vector<std::string>& argv);

struct SweepOptions {
  RunOptions run;  // the lab and the options of each point's run (run.command: sweep)
  std::vector<std::string> axes;  // NAME=VALUES (app/sweep_axes.hpp)
  bool zip = false;
  bool yes = false;  // more than kMaxPointsWithoutYes points
};
CLI::App* add_sweep(CLI::App& root, SweepOptions& options);
int run_sweep(SweepOptions& options, Session& session, Io& io,
              const std::vector<std::string>& argv);

struct DiagnoseOptions {
  RunOptions run;           // when a lab is given: run it first (run.command: diagnose)
  std::string report_path;  // otherwise: diagnose this saved report
  std::string kernel;
  bool list_thresholds = false;
};
CLI::App* add_diagnose(CLI::App& root, DiagnoseOptions& options);
int run_diagnose(DiagnoseOptions& options, Session& session, Io& io,
                 const std::vector<std::string>& argv);
// A diagnosed report as diagnose prints it in a --format.
void print_diagnosis(const report::Report& report, OutputFormat format, Io& io,
                     bool all_findings = false);

struct CompleteOptions {
  std::vector<std::string> words;
};
CLI::App* add_complete(CLI::App& root, CompleteOptions& options);
int run_complete(const CompleteOptions& options, Io& io);

struct SelftestOptions {
  std::string labs = "all";
  int repeat = 5;
  std::string reports;     // a folder of saved lab reports (LAB.json) to judge instead of running
  bool estimates = false;  // also the estimated gains' calibration on the labs' fixes
};
CLI::App* add_selftest(CLI::App& root, SelftestOptions& options);
int run_selftest(const SelftestOptions& options, Session& session, Io& io);

// The self-test's table for diagnosed reports of `labs` (one each, in the same order): every
// variant's principal finding against the one its lab expects, then "selftest: passed" or
// "selftest: FAILED".
struct SelftestVerdict {
  std::string text;
  bool failed = false;
};
SelftestVerdict judge_labs(const std::vector<const labs::Lab*>& labs,
                           const std::vector<report::Report>& reports);

// The calibration table of the estimated gains (reports/diagnosis/estimates.hpp) over the lab
// pairs of diagnosed `reports`.
std::string estimates_calibration(const std::vector<report::Report>& reports);

struct CompareOptions {
  std::vector<std::string> files;
  std::string variants;  // "A,B": two variants of one report
  OutputFormat format = OutputFormat::text;
  std::optional<double> fail_on_regression;  // percent
  std::string metrics;
  std::string json_path;
  std::string html_path;
};
CLI::App* add_compare(CLI::App& root, CompareOptions& options);
int run_compare(const CompareOptions& options, Io& io);
// compare's two halves: the comparisons the options ask for (the reports read and diagnosed),
// and printing them in a --format.
std::vector<report::Comparison> comparisons_of(const CompareOptions& options);
void print_comparisons(const std::vector<report::Comparison>& comparisons, OutputFormat format,
                       Io& io);

struct ReportOptions {
  std::vector<std::string> files;
  std::string html_path;
  std::string trace_path;
};
CLI::App* add_report(CLI::App& root, ReportOptions& options);
int run_report(const ReportOptions& options, const std::vector<std::string>& argv, Io& io);

struct ExportOptions {
  std::vector<std::string> files;
  std::string sqlite_path;
  bool replace = false;
  std::string job;  // --ranks: the reports are its ranks, in order
};
CLI::App* add_export(CLI::App& root, ExportOptions& options);
int run_export(const ExportOptions& options, Io& io);

struct SourceOptions {
  std::string lab;
  std::string report_path;
  std::string variant;
  std::string kernel;
  bool sass = false;
};
CLI::App* add_source(CLI::App& root, SourceOptions& options);
int run_source(const SourceOptions& options, Session& session, Io& io,
               const std::vector<std::string>& argv);

struct ProfileOptions {
  std::string kernel;  // regular expression; empty: every kernel
  std::vector<std::string> nvtx_include;  // reports/nvtx_filter.hpp
  std::vector<std::string> nvtx_exclude;
  std::string capture_range = "none";  // none, or cudaProfilerApi
  std::int64_t launch_skip = 0;
  std::string launch_count = "100";  // a count, or "all"
  std::string metrics;               // unset: basic (full with --diagnose)
  std::string replay = "batch";  // batch, kernel or none
  bool source = false;           // per-instruction data (reports/source_records.hpp)
  bool trace = false;
  double kernel_timeout = 600;  // seconds one profiled launch may take; 0: no limit
  bool diagnose = false;
  bool all_findings = false;
  std::vector<std::string> thresholds;
  std::string json_path;
  OutputFormat format = OutputFormat::text;
  std::vector<std::string> command;  // the program and its arguments
};
CLI::App* add_profile(CLI::App& root, ProfileOptions& options);
// A command line of `profile` splits at its program, as `timeout` and `nohup` do: the program is
// the first word after profile's options and their values (or after `--`), and every word from it
// on is the program's, options included. Returns the program's words and leaves gpulab's in
// `args`; a line of another command is left whole.
std::vector<std::string> split_off_program(std::vector<std::string>& args, const CLI::App& profile);
int run_profile(const ProfileOptions& options, Session& session, Io& io,
                const std::vector<std::string>& argv);

}  // namespace gpulab::app
