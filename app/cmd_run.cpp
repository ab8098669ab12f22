// `gpulab run LAB`: check, time and profile a lab's variants; print text or JSON, save JSON.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_phases.hpp"
#include "reports/render/render_text.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {

CLI::App* add_run(CLI::App& root, RunOptions& options) {
  auto* cmd = root.add_subcommand("run", "Check, time and profile the variants of a lab");
  cmd->add_option("lab", options.lab, "Lab to run (see gpulab list)");
  add_lab_options(cmd, options);
  cmd->add_flag("--diagnose,-d", options.diagnose, "Diagnose every kernel into the report");
  cmd->add_flag("--all,-a", options.all, "Run every lab at its default size; then a summary");
  cmd->add_flag("--verbose", options.verbose,
                "Also print where each lab's wall time went: device, setup, checks (with the CPU "
                "references), timing, trace, counters, source");
  cmd->add_option("--json-dir", options.json_dir,
                  "With --all: write each lab's report to DIR/LAB.json")
      ->type_name("DIR");
  return cmd;
}

namespace {

int run_all_labs(RunOptions& options, Session& session, Io& io, const std::vector<std::string>& argv) {
  if (!options.lab.empty()) throw UsageError("give a lab or --all, not both");
  refuse_given(*options.command, {"--size", "--param", "--variant"}, "run --all",
               "it runs every lab at its defaults");
  refuse_given(*options.command, {"--json"}, "run --all", "it writes one report per lab: use --json-dir");
  if (options.json_dir == kStandardStream)
    throw UsageError("--json-dir takes a folder; '-' (standard output) is for --json FILE");
  if (!options.json_dir.empty()) check_output(options.json_dir + "/probe.json");

  std::vector<report::Report> reports;
  const auto all = labs::all_labs();
  int code = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    RunOptions one = options;
    one.all = false;
    one.lab = all[i]->spec().name;
    if (!options.json_dir.empty()) one.json_path = options.json_dir + "/" + one.lab + ".json";
    if (io.progress) io.err << fmt::format("gpulab: [{}/{}] {}\n", i + 1, all.size(), one.lab);
    reports.push_back(execute_lab(one, session, io, argv));
    // Saved as each lab ends: a failure later in the run keeps the labs already measured.
    code = std::max(code, save_outputs({report_file(one.json_path, reports.back())}, io,
                                       exit_code_of(reports.back())));
  }
  if (options.format == OutputFormat::json) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& r : reports) array.push_back(report::to_json(r));
    io.out << array.dump(2) << "\n";
  } else if (options.format == OutputFormat::csv) {
    for (std::size_t i = 0; i < reports.size(); ++i) {
      const std::string csv = report::report_csv(reports[i]);
      io.out << (i == 0 ? csv : csv.substr(csv.find('\n') + 1));  // one header line
    }
  } else {
    const auto style = text_style(options.format, io, options.all_findings);
    for (const auto& r : reports) io.out << report::render_text(r, style) << "\n";
    io.out << "summary: the best variant of each lab (reference libraries aside) against its "
              "baseline and its limit (the reference library, else the copy roof)\n"
           << all_labs_summary(reports, style);
    if (options.verbose) io.out << "\n" << report::render_phase_table(reports, style);
  }
  return code;
}

}  // namespace

int run_run(RunOptions& options, Session& session, Io& io, const std::vector<std::string>& argv) {
  if (!options.diagnose)
    refuse_given(*options.command, {"--threshold", "--all-findings"}, "run",
                 "it shapes a diagnosis: add --diagnose");
  if (options.all) return run_all_labs(options, session, io, argv);
  if (options.lab.empty()) throw UsageError("run needs a lab (see gpulab list) or --all");
  refuse_given(*options.command, {"--json-dir"}, "run " + options.lab, "it goes with --all; use --json FILE");
  const auto report = execute_lab(options, session, io, argv);
  Io text = text_io(io, {options.json_path});
  print_report(report, options.format, text, options.all_findings);
  if (options.verbose &&
      (options.format == OutputFormat::text || options.format == OutputFormat::markdown))
    text.out << report::phases_line(report);
  return save_outputs({report_file(options.json_path, report)}, io, exit_code_of(report));
}

}  // namespace gpulab::app
