// `gpulab compare`: two reports (before/after, machine vs machine), two variants of one report,
// several reports against the first, two runs of a job (each a set of rank reports) rank by
// rank, or two sweeps point by point. No GPU needed.
#include <algorithm>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "app/version.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/base/user_input.hpp"
#include "reports/derived.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/rank_view.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_compare.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_html.hpp"
#include "reports/render/render_ranks.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/sweep_findings.hpp"
#include "reports/sweep_json.hpp"

namespace gpulab::app {
namespace {

// Metric names for --metrics: catalogue names or short names, derived names, or CUPTI names.
std::vector<std::string> compare_metric_names(const std::string& list) {
  std::vector<std::string> names;
  for (const auto& item : split_list("--metrics", list)) {
    if (auto counter = report::metrics::counter_name(item)) {
      names.push_back(std::move(*counter));
    } else if (report::find_derived(item)) {
      names.push_back(item);
    } else {
      throw UsageError(fmt::format("--metrics: unknown metric '{}' (see gpulab list --metrics)", item));
    }
  }
  return names;
}

std::pair<std::string, std::string> variant_pair(const std::string& text) {
  const auto names = split_list("--variants", text);
  if (names.size() != 2)
    throw UsageError(fmt::format("--variants '{}': expected two names, A,B", text));
  return {names[0], names[1]};
}

}  // namespace

CLI::App* add_compare(CLI::App& root, CompareOptions& options) {
  auto* cmd = root.add_subcommand(
      "compare",
      "Compare reports: A B (before/after), A B C... (against A), two runs of a job's ranks "
      "(a.0 a.1 b.0 b.1: rank by rank), or one with --variants");
  cmd->add_option("reports", options.files,
                  "Report files written by gpulab run or gpulab profile --json")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--variants", options.variants, "Compare two variants of one report: A,B");
  add_format_option(*cmd, options.format);
  cmd->add_option("--fail-on-regression", options.fail_on_regression,
                  "Exit 5 when a variant is slower than the first report by more than PCT "
                  "percent, outside noise")
      ->check(number_in(0, 1e6));
  cmd->add_option("--metrics", options.metrics,
                  "Metrics to compare (comma-separated; default: DRAM bytes, sectors/request, "
                  "excess wavefronts, local bytes, occupancy, throughput)");
  cmd->add_option("--json", options.json_path, "Also write the comparison as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--html", options.html_path,
                  "Also write the comparison as a self-contained HTML page to FILE")
      ->type_name("FILE");
  return cmd;
}

namespace {

// What compare reads, after the checks of what it was given: reports, or two sweeps.
struct ToCompare {
  std::vector<report::Report> reports;
  std::vector<report::Sweep> sweeps;
};

ToCompare documents_to_compare(const CompareOptions& options) {
  if (!options.variants.empty() && options.files.size() != 1)
    throw UsageError("--variants compares two variants of ONE report; give one file");
  if (options.variants.empty() && options.files.size() < 2)
    throw UsageError("compare needs two or more reports, or one report and --variants A,B");
  ToCompare read;
  for (const auto& file : options.files) {
    const auto doc = report::read_json_file(file);
    if (report::is_sweep(doc))
      read.sweeps.push_back(report::sweep_from_document(doc, file));
    else
      read.reports.push_back(report::report_from_document(doc, file));
  }
  if (!read.sweeps.empty() && (read.sweeps.size() != 2 || !read.reports.empty()))
    throw UsageError(
        "compare takes two sweeps, point by point, or reports: not a mix, nor "
        "more than two sweeps");
  if (!read.sweeps.empty() && !options.variants.empty())
    throw UsageError("--variants compares two variants of one report, not sweeps");
  return read;
}

std::vector<report::Report> reports_to_compare(const CompareOptions& options) {
  auto read = documents_to_compare(options);
  if (!read.sweeps.empty())
    throw UsageError("compare: a sweep is compared with another sweep, point by point");
  return std::move(read.reports);
}

std::string point_label(const std::string& file, const report::SweepPoint& at) {
  std::string where;
  for (const auto& [name, value] : at)
    where += fmt::format("{}{}={}", where.empty() ? "" : ",", name, report::axis_value(value));
  return file + " at " + where;
}

report::CompareOptions compare_options_of(const CompareOptions& options) {
  report::CompareOptions compare_options;
  if (!options.metrics.empty()) compare_options.metrics = compare_metric_names(options.metrics);
  return compare_options;
}

// Two sweeps of one lab over the same axes: each point of the first against the same point of
// the second, as two reports are compared; a point of one sweep only is said on stderr.
std::vector<report::Comparison> compared_sweeps(const CompareOptions& options,
                                                std::vector<report::Sweep>& sweeps, Io& io) {
  report::Sweep& a = sweeps[0];
  report::Sweep& b = sweeps[1];
  if (a.lab != b.lab)
    throw UsageError(fmt::format("compare: sweeps of lab '{}' and of lab '{}'", a.lab, b.lab));
  const auto compare_options = compare_options_of(options);
  std::vector<report::Comparison> comparisons;
  for (auto& p : a.points) {
    auto it = std::find_if(b.points.begin(), b.points.end(),
                           [&](const report::SweepPointReport& q) { return q.at == p.at; });
    if (it == b.points.end()) {
      io.err << "gpulab: warning: " << report::terminal_safe(point_label(options.files[0], p.at))
             << ": no such point in " << report::terminal_safe(options.files[1]) << "\n";
      continue;
    }
    diagnose_into(p.report, report::Thresholds());
    diagnose_into(it->report, report::Thresholds());
    comparisons.push_back(
        report::compare_reports(p.report, it->report, point_label(options.files[0], p.at),
                                point_label(options.files[1], it->at), compare_options));
  }
  for (const auto& q : b.points)
    if (std::none_of(a.points.begin(), a.points.end(),
                     [&](const report::SweepPointReport& p) { return p.at == q.at; }))
      io.err << "gpulab: warning: " << report::terminal_safe(point_label(options.files[1], q.at))
             << ": no such point in " << report::terminal_safe(options.files[0]) << "\n";
  if (comparisons.empty()) throw UsageError("compare: the two sweeps have no point in common");
  return comparisons;
}

std::vector<report::Comparison> compared(const CompareOptions& options,
                                         std::vector<report::Report>& reports) {
  const auto compare_options = compare_options_of(options);
  // Findings resolved and introduced come from this build's tree on both sides, whatever
  // diagnosis (of whichever version) a report carries: both are judged alike.
  for (auto& r : reports) diagnose_into(r, report::Thresholds());

  std::vector<report::Comparison> comparisons;
  if (!options.variants.empty()) {
    const auto [a, b] = variant_pair(options.variants);
    comparisons.push_back(
        report::compare_variants(reports[0], a, b, options.files[0], compare_options));
  } else {
    for (std::size_t i = 1; i < reports.size(); ++i)
      comparisons.push_back(report::compare_reports(reports[0], reports[i], options.files[0],
                                                    options.files[i], compare_options));
  }
  return comparisons;
}

// Two runs of a job, each a set of rank reports: rank by rank, as text or JSON.
int compare_runs_of_a_job(const CompareOptions& options, const std::vector<report::Report>& reports,
                          Io& io) {
  const char* refused = !options.html_path.empty()            ? "--html"
                        : !options.metrics.empty()            ? "--metrics"
                        : options.fail_on_regression          ? "--fail-on-regression"
                        : options.format == OutputFormat::csv ? "--format csv"
                                                              : nullptr;
  if (refused)
    throw UsageError(fmt::format(
        "{}: two runs of a job's ranks are compared by each rank's GPU time per function, as "
        "text or JSON; compare one rank's two reports for the rest",
        refused));
  const report::RankComparison c = report::compare_rank_sets(reports);
  const auto json = report::rank_comparison_json(c);
  Io text = text_io(io, {options.json_path});
  if (options.format == OutputFormat::json)
    text.out << json.dump(2) << "\n";
  else
    text.out << report::render_rank_comparison(c, text_style(options.format, text));
  std::vector<OutputFile> files;
  if (!options.json_path.empty()) files.push_back({options.json_path, json.dump(2) + "\n"});
  return save_outputs(files, io);
}

}  // namespace

std::vector<report::Comparison> comparisons_of(const CompareOptions& options) {
  auto reports = reports_to_compare(options);
  return compared(options, reports);
}

void print_comparisons(const std::vector<report::Comparison>& comparisons, OutputFormat format,
                       Io& io) {
  if (format == OutputFormat::json) {
    io.out << report::comparison_json(comparisons).dump(2) << "\n";
  } else if (format == OutputFormat::csv) {
    io.out << report::comparison_csv(comparisons);
  } else {
    const auto style = text_style(format, io);
    io.out << (comparisons.size() == 1 ? report::render_comparison(comparisons[0], style)
                                       : report::render_comparison_table(comparisons, style));
  }
}

int run_compare(const CompareOptions& options, Io& io) {
  // Before the reports are read: a bad output path is refused first, and nothing is half-done.
  refuse_two_standard_streams(options.files, "input");
  refuse_two_standard_streams({options.json_path, options.html_path}, "output");
  if (!options.json_path.empty()) check_output(options.json_path);
  if (!options.html_path.empty()) check_output(options.html_path);
  auto read = documents_to_compare(options);
  auto& reports = read.reports;
  if (options.variants.empty() && read.sweeps.empty() && report::are_two_rank_sets(reports))
    return compare_runs_of_a_job(options, reports, io);
  const auto comparisons =
      read.sweeps.empty() ? compared(options, reports) : compared_sweeps(options, read.sweeps, io);
  Io text = text_io(io, {options.json_path, options.html_path});
  print_comparisons(comparisons, options.format, text);

  std::vector<OutputFile> files;
  if (!options.json_path.empty())
    files.push_back({options.json_path, report::comparison_json(comparisons).dump(2) + "\n"});
  if (!options.html_path.empty()) {
    report::HtmlPage page;
    page.title = "gpulab comparison";
    page.generator = fmt::format("gpulab {} ({})", kVersion, kGitSha);
    files.push_back({options.html_path, report::render_html(comparisons, page)});
  }
  const int saved = save_outputs(files, io);

  if (!options.fail_on_regression) return saved;
  int code = saved;
  for (const auto& c : comparisons) {
    for (const auto* v : c.regressions(*options.fail_on_regression)) {
      io.err << fmt::format("gpulab: regression: {} {} is {:.1f}% slower in {} (limit {}%, noise "
                            "±{:.1f}%)\n",
                            report::terminal_safe(v->lab), report::terminal_safe(v->variant_b),
                            v->change * 100.0, report::terminal_safe(c.label_b),
                            *options.fail_on_regression, v->noise * 100.0);
      code = static_cast<int>(ExitCode::regression);
    }
  }
  return code;
}

}  // namespace gpulab::app
