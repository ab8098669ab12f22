// `gpulab run LAB`: check, time and profile a lab's variants; print text or JSON, save JSON.
#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/base/user_input.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/diagnosis/limits.hpp"
#include "reports/kernel_name.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/render_csv.hpp"
#include "reports/render/render_diagnosis.hpp"
#include "reports/render/render_text.hpp"
#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"
#include "reports/units.hpp"

namespace gpulab::app {
namespace {

// "NAME=VALUE" with an integer VALUE.
std::pair<std::string, std::int64_t> parse_param(const std::string& text) {
  const auto [name, value] = split_assignment("--param", text);
  return {name, parse_integer("--param " + name, value)};
}

}  // namespace

void add_lab_options(CLI::App* cmd, RunOptions& options) {
  options.command = cmd;
  auto& s = options.settings;
  cmd->add_option("--variant,-v", s.variants, "Variant name, comma-separated names, or all")
      ->capture_default_str();
  cmd->add_option("--size,-s", s.size, "Problem size (sets the lab's size parameters)")
      // Any integer: the lab's own bounds, with the parameter's name, are checked in run_lab.
      ->check(integer_in(std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max()));
  cmd->add_option("--param,-p", options.params, "Lab parameter NAME=VALUE (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--repeat,-r", s.repeat, "Timed launches per variant (default: 20, or the "
                  "lab's own: gpulab list)")
      ->check(integer_in(1, 100000));
  cmd->add_option("--warmup", s.warmup, "Untimed launches before timing (default: 5, or the "
                  "lab's own)")
      ->check(integer_in(0, 10000));
  cmd->add_flag("--cold", s.cold, "Flush L2 before every timed launch");
  s.metrics.clear();  // unset: decided by app/metric_choice.hpp
  cmd->add_option("--metrics,-m", s.metrics,
                  "Counters: basic, stalls, full, none, or a comma-separated list of metric "
                  "names (default: basic; full when diagnosing; none for traced labs)");
  cmd->add_option("--replay-mode", s.replay,
                  "Counters: variant = gpulab replays the variant once per pass, kernel = CUPTI "
                  "replays each kernel, restoring memory between passes")
      ->check(one_of(kReplayModes))
      ->capture_default_str();
  cmd->add_option("--cache-control", s.cache_control,
                  "Counters: all = flush L2 before every replay pass (as ncu does), none = "
                  "leave caches as the previous pass left them (default: all; none with "
                  "--replay-mode kernel)")
      ->check(one_of(kCacheControls));
  cmd->add_flag("--source", s.source,
                "Also collect per-instruction counters and warp-stall samples (two more "
                "launches of each variant, untimed): 'gpulab source --report FILE' shows them "
                "by line");
  cmd->add_flag("--embed-source", s.embed_source,
                "With --source: copy the text of every source file its lines name into the "
                "report (sources may be private: off unless asked)");
  cmd->add_option("--seed", s.seed, "Seed of the random inputs")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str();
  cmd->add_option("--threshold,-t", options.thresholds,
                  "Override a diagnosis threshold NAME=VALUE (repeatable; gpulab diagnose "
                  "--list-thresholds lists them with their ranges)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  cmd->add_flag("--all-findings", options.all_findings,
                "Show every finding of each kernel (default: the three ranked first)");
  cmd->add_option("--json", options.json_path,
                  "Also write the report as JSON to FILE ('-': stdout; a file replaced "
                  "atomically, a device or FIFO written in place)")
      ->type_name("FILE");
  add_format_option(*cmd, options.format);
}

CLI::App* add_run(CLI::App& root, RunOptions& options) {
  auto* cmd = root.add_subcommand("run", "Check, time and profile the variants of a lab");
  cmd->add_option("lab", options.lab, "Lab to run (see gpulab list)");
  add_lab_options(cmd, options);
  cmd->add_flag("--diagnose,-d", options.diagnose, "Diagnose every kernel into the report");
  cmd->add_flag("--all,-a", options.all, "Run every lab at its default size; then a summary");
  cmd->add_option("--json-dir", options.json_dir,
                  "With --all: write each lab's report to DIR/LAB.json")
      ->type_name("DIR");
  return cmd;
}

report::Thresholds parse_thresholds(const std::vector<std::string>& assignments) {
  report::Thresholds thresholds;
  for (const auto& a : assignments) thresholds.set_from_text(a);
  return thresholds;
}

report::KernelAsked kernels_named(const std::string& name) {
  if (name.empty()) return {};
  return [name](const report::Kernel& k) { return report::names_kernel(name, k.name, k.function); };
}

void diagnose_into(report::Report& report, const report::Thresholds& thresholds,
                   const report::KernelAsked& asked) {
  report::derive_all(report);  // from the raw counters, with this build's formulas
  report::diagnose_report(report, thresholds, asked);
  // Point only at labs this build has.
  for (auto& v : report.variants)
    for (auto* d : report::diagnoses_of(v))
      for (auto& f : d->findings)
        f.labs.erase(std::remove_if(f.labs.begin(), f.labs.end(),
                                    [](const std::string& l) { return !labs::find_lab(l); }),
                     f.labs.end());
}

report::Report execute_lab(RunOptions& options, Session& session, Io& io,
                           const std::vector<std::string>& argv) {
  // Validate everything that can be validated before the GPU is touched.
  const auto& lab = labs::lab_or_throw(options.lab);
  for (const auto& p : options.params) {
    const auto [name, value] = parse_param(p);
    options.settings.params[name] = value;
  }
  const auto thresholds = parse_thresholds(options.thresholds);
  options.settings.diagnosed = options.diagnose;  // the counters it needs: app/metric_choice.hpp
  if (!options.json_path.empty()) check_output(options.json_path);
  if (options.settings.embed_source && !options.settings.source)
    throw UsageError("--embed-source copies the files --source collects lines of: add --source");
  options.settings.progress = io.progress;

  std::vector<std::string> full_argv{"gpulab"};
  full_argv.insert(full_argv.end(), argv.begin(), argv.end());
  auto report = run_lab(session, lab, options.settings, full_argv);
  if (options.diagnose) diagnose_into(report, thresholds, kernels_named(options.diagnose_kernel));
  session.remember(report);
  return report;
}

report::Style text_style(OutputFormat format, const Io& io, bool all_findings) {
  report::Style style;
  style.table =
      format == OutputFormat::markdown ? report::TableStyle::markdown : report::TableStyle::text;
  style.color = io.color && format == OutputFormat::text;
  if (all_findings) style.max_findings = 0;
  return style;
}

void print_report(const report::Report& report, OutputFormat format, Io& io, bool all_findings) {
  if (format == OutputFormat::json) {
    io.out << report::to_json(report).dump(2) << "\n";
  } else if (format == OutputFormat::csv) {
    io.out << report::report_csv(report);
  } else {
    const auto style = text_style(format, io, all_findings);
    io.out << report::render_text(report, style);
    if (report::has_diagnosis(report)) io.out << "\n" << report::render_diagnosis(report, style);
  }
  // Structured output keeps stdout clean: warnings (also inside the report) go to stderr.
  if (format == OutputFormat::json || format == OutputFormat::csv)
    for (const auto& w : report.warnings)
      io.err << "gpulab: warning: " << report::terminal_safe(w) << "\n";
}

int exit_code_of(const report::Report& report) {
  for (const auto& v : report.variants)
    if (v.check.status == report::CheckStatus::failed) return static_cast<int>(ExitCode::check_failed);
  return 0;
}

// The best (fastest checked) variant of each lab against its baseline, and against the lab's
// limit (reports/diagnosis/limits.hpp): reference implementations (cuBLAS, CUB) are what the lab's
// own variants are measured against, not candidates for its best.
std::string all_labs_summary(const std::vector<report::Report>& reports, const report::Style& style) {
  report::TextTable table(
      {"lab", "baseline", "median", "best", "median", "speedup", "of limit", "checks"}, 2);
  for (const auto& r : reports) {
    const auto* base = r.baseline();
    const auto limit = report::lab_limit(r);
    const auto* best = limit.best;
    int passed = 0, total = 0, skipped = 0;
    for (const auto& v : r.variants) {
      if (v.status == report::VariantStatus::skipped) {
        ++skipped;
        continue;
      }
      ++total;
      if (v.check.status == report::CheckStatus::passed) ++passed;
    }
    const bool base_ran = base && base->status != report::VariantStatus::skipped;
    std::string checks = fmt::format("{}/{}", passed, total);
    if (skipped > 0) checks += fmt::format(", {} skipped", skipped);
    table.add_row(
        {r.subject(), base ? base->name : "-",
         base_ran ? report::units::seconds(base->timing.median)
         : base   ? "skipped"
                  : "-",
         best ? best->name : "-", best ? report::units::seconds(best->timing.median) : "-",
         best && best->speedup > 0 ? report::units::ratio(best->speedup) : "-", limit.text(),
         report::paint(checks, passed == total ? report::Tone::good : report::Tone::bad, style)});
  }
  return style.table == report::TableStyle::markdown ? table.render_markdown() : table.render();
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
    code =
        std::max(code, save_outputs({{one.json_path, report_file(one.json_path, reports.back())}},
                                    io, exit_code_of(reports.back())));
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
  return save_outputs({{options.json_path, report_file(options.json_path, report)}}, io,
                      exit_code_of(report));
}

}  // namespace gpulab::app
