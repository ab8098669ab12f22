// `gpulab report`: saved reports as one self-contained HTML page, or a traced report's
// timelines as a Chrome trace-event file for Perfetto; saved sweeps as plots, or their tables.
// No GPU needed.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/outputs.hpp"
#include "app/source_files.hpp"
#include "app/version.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/rank_view.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/render_ranks.hpp"
#include "reports/render/render_sweep.hpp"
#include "reports/render/render_sweep_html.hpp"
#include "reports/render/trace_events.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/sweep_json.hpp"

namespace gpulab::app {
CLI::App* add_report(CLI::App& root, ReportOptions& options) {
  auto* cmd = root.add_subcommand(
      "report", "Render saved reports as one HTML page (-o), or a timeline for Perfetto (--trace)");
  cmd->add_option("reports", options.files, "Report files written by gpulab run --json")
      ->type_name("FILE")
      ->required();
  cmd->add_option("-o,--html", options.html_path, "Write the HTML page here")->type_name("FILE");
  cmd->add_option("--trace", options.trace_path,
                  "Write the report's timelines here as Chrome trace-event JSON (one report, or "
                  "a job's ranks' reports: a process per rank)")
      ->type_name("FILE");
  return cmd;
}

namespace {

// Sweeps (gpulab.sweep/1): their plots as an HTML page, or their tables on the terminal.
int report_sweeps(const ReportOptions& options, const std::vector<report::Sweep>& sweeps,
                  bool with_reports, const std::vector<std::string>& argv, Io& io) {
  if (with_reports)
    throw UsageError("report takes lab reports or sweeps, not both: give them in two commands");
  if (!options.trace_path.empty())
    throw UsageError(
        "--trace draws a report's timelines; a sweep has none (-o FILE.html plots it)");
  if (options.html_path.empty()) {
    for (const auto& s : sweeps)
      io.out << report::render_sweep_text(s, report::Style{}, io.columns) << "\n";
    return static_cast<int>(ExitCode::ok);
  }
  write_output(
      options.html_path,
      report::render_sweep_html(sweeps, fmt::format("gpulab {} ({})", kVersion, kGitSha), argv),
      io.out);
  if (options.html_path != kStandardStream) io.err << fmt::format("wrote {}\n", options.html_path);
  return static_cast<int>(ExitCode::ok);
}

}  // namespace

int run_report(const ReportOptions& options, const std::vector<std::string>& argv, Io& io) {
  const bool outputs = !options.html_path.empty() || !options.trace_path.empty();

  refuse_two_standard_streams(options.files, "input");
  refuse_two_standard_streams({options.html_path, options.trace_path}, "output");
  for (const auto& path : {options.html_path, options.trace_path})
    if (!path.empty()) check_output(path);

  std::vector<report::Report> reports;
  std::vector<report::Sweep> sweeps;
  for (const auto& f : options.files) {
    const auto doc = report::read_json_file(f);
    if (report::is_sweep(doc)) {
      sweeps.push_back(report::sweep_from_document(doc, f));
      continue;
    }
    reports.push_back(report::report_from_document(doc, f));
    if (options.html_path.empty()) continue;  // a trace shows no diagnosis
    // The page shows every kernel's decision path: walk the tree where the report has none.
    if (!report::has_diagnosis(reports.back())) diagnose_into(reports.back(), report::Thresholds());
  }
  if (!sweeps.empty()) return report_sweeps(options, sweeps, !reports.empty(), argv, io);
  // A job's ranks, with no file asked for: their table on the terminal.
  if (!outputs) {
    if (!report::are_rank_reports(reports))
      throw UsageError(
          "report needs -o FILE.html, --trace FILE.json, or both (or two or more "
          "reports of a job's ranks, whose table it prints)");
    io.out << report::render_rank_view(report::rank_view(reports), report::Style{});
    return static_cast<int>(ExitCode::ok);
  }
  if (!options.trace_path.empty()) {
    // Several reports: a job's ranks, each with its own timeline; one report's timelines else.
    if (reports.size() > 1 && !report::are_rank_reports(reports))
      throw UsageError(
          fmt::format("--trace takes one report, or the reports of a job's ranks "
                      "({} given, not all ranks'): each report's timelines have "
                      "their own time origin",
                      reports.size()));
    const auto trace = reports.size() > 1 ? report::trace_events_of_ranks(reports)
                                          : report::trace_events(reports[0]);
    write_output(options.trace_path, trace.dump(1) + "\n", io.out);
    if (options.trace_path != kStandardStream)
      io.err << fmt::format("wrote {} (open it in https://ui.perfetto.dev or chrome://tracing)\n",
                            options.trace_path);
  }
  if (!options.html_path.empty()) {
    report::HtmlPage page;
    page.argv = argv;
    page.generator = fmt::format("gpulab {} ({})", kVersion, kGitSha);
    page.source_text = files_on_disk();
    write_output(options.html_path, report::render_html(reports, page), io.out);
    if (options.html_path != kStandardStream)
      io.err << fmt::format("wrote {}\n", options.html_path);
  }
  return static_cast<int>(ExitCode::ok);
}

}  // namespace gpulab::app
