// `gpulab diagnose`: run a lab and walk the decision tree over its counters, or diagnose a
// saved report offline (--report), with no GPU.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/base/user_input.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/selection.hpp"

namespace gpulab::app {
namespace {

std::string thresholds_text() {
  report::TextTable table({"threshold", "default", "range", "meaning"}, 4);
  for (const auto& t : report::threshold_catalogue())
    table.add_row({t.name, fmt::format("{}", t.default_value),
                   fmt::format("{} to {}", t.min, t.max), t.meaning});
  return table.render();
}

// The options that only shape a lab run: a saved report is diagnosed without one.
const std::vector<std::string> kRunOnly = {
    "--size",        "--param",         "--repeat",  "--warmup", "--max-noise",
    "--min-samples", "--min-time",      "--timeout", "--cold",   "--metrics",
    "--replay-mode", "--cache-control", "--seed"};

void refuse_all_given(const CLI::App& cmd, const std::string& except) {
  for (const auto* opt : cmd.get_options())
    if (opt->count() > 0 && opt->get_name() != except)
      throw UsageError(fmt::format("diagnose {}: {} does not apply (it only lists the thresholds)",
                                   except, opt->get_name()));
}

}  // namespace

CLI::App* add_diagnose(CLI::App& root, DiagnoseOptions& options) {
  auto* cmd = root.add_subcommand(
      "diagnose", "Say what limits each kernel and what to do: run a lab, or read --report");
  cmd->add_option("lab", options.run.lab, "Lab to run and diagnose (see gpulab list)");
  add_lab_options(cmd, options.run);
  cmd->add_option("--report", options.report_path, "Diagnose a saved report (no GPU needed)")
      ->type_name("FILE");
  cmd->add_option("--kernel", options.kernel,
                  "Only this kernel, diagnosed whatever its share of the time (timeline: a traced "
                  "variant's timeline)");
  cmd->add_flag("--list-thresholds", options.list_thresholds,
                "List the thresholds, their defaults and ranges");
  options.run.diagnose = true;
  return cmd;
}

int run_diagnose(DiagnoseOptions& options, Session& session, Io& io,
                 const std::vector<std::string>& argv) {
  auto& run = options.run;
  const CLI::App& cmd = *run.command;
  if (options.list_thresholds) {
    refuse_all_given(cmd, "--list-thresholds");
    io.out << thresholds_text();
    return 0;
  }
  if (run.lab.empty() == options.report_path.empty())
    throw UsageError("diagnose needs a lab to run or --report FILE (one of the two)");

  // --variant and --kernel select what is printed, in every format, and what --json saves.
  const std::vector<std::string> variants =
      run.settings.variants == "all" ? std::vector<std::string>{}
                                     : split_list("--variant", run.settings.variants);
  const std::string json_path = run.json_path;
  if (!json_path.empty()) check_output(json_path);  // before the GPU work
  report::Report report;
  if (!options.report_path.empty()) {
    refuse_given(cmd, kRunOnly, "diagnose --report", "it reads a saved report and runs no lab");
    const auto thresholds = parse_thresholds(run.thresholds);
    // Diagnosed whole, then selected: a kernel's share of the time is of its whole variant.
    report = report::load_report(options.report_path);
    if (report.variants.empty())
      throw UsageError(fmt::format("'{}' holds no kernels to diagnose: {} launched none",
                                   options.report_path,
                                   report.program ? "the program" : "its run"));
    diagnose_into(report, thresholds, kernels_named(options.kernel));
    report = report::select(report, variants, options.kernel, "'" + options.report_path + "'");
  } else {
    RunOptions lab_run = run;
    lab_run.json_path.clear();  // saved below, as selected
    lab_run.diagnose_kernel = options.kernel;
    report = execute_lab(lab_run, session, io, argv);
    report = report::select(report, variants, options.kernel, "lab '" + run.lab + "'");
  }
  session.remember(report);
  Io text = text_io(io, {json_path});
  print_diagnosis(report, run.format, text, run.all_findings);
  return save_outputs({report_file(json_path, report)}, io, exit_code_of(report));
}

void print_diagnosis(const report::Report& report, OutputFormat format, Io& io, bool all_findings) {
  if (format == OutputFormat::json) {
    io.out << report::report_file_text(report);
  } else if (format == OutputFormat::csv) {
    io.out << report::findings_csv(report);
  } else {
    io.out << report::render_diagnosis(report, text_style(format, io, all_findings));
  }
}

}  // namespace gpulab::app
