// `gpulab diagnose`: run a lab and walk the decision tree over its counters, or diagnose a
// saved report offline (--report), with no GPU.
#include <algorithm>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "reports/errors.hpp"
#include "reports/kernel_name.hpp"
#include "reports/render_csv.hpp"
#include "reports/render_diagnosis.hpp"
#include "reports/report_json.hpp"
#include "reports/table.hpp"

namespace gpulab::app {
namespace {

std::string thresholds_text() {
  TextTable table({"threshold", "default", "meaning"}, 3);
  for (const auto& t : report::threshold_catalogue())
    table.add_row({t.name, fmt::format("{}", t.default_value), t.meaning});
  return table.render();
}

// `kernel` names a kernel of the variant(s), or "timeline" for a traced variant's timeline.
bool has_kernel(const report::Variant& v, const std::string& kernel) {
  if (kernel == "timeline" && v.timeline) return true;
  return std::any_of(v.kernels.begin(), v.kernels.end(),
                     [&](const report::Kernel& k) {
                       return report::names_kernel(kernel, k.name, k.function);
                     });
}

void require_variant_and_kernel(const report::Report& r, const std::string& variant,
                                const std::string& kernel, const std::string& where) {
  if (variant.empty() || variant == "all") {
    if (kernel.empty()) return;
    for (const auto& v : r.variants)
      if (has_kernel(v, kernel)) return;
    throw UsageError(fmt::format("{} has no kernel '{}'", where, kernel));
  }
  const auto* v = r.find_variant(variant);
  if (!v) throw UsageError(fmt::format("{} has no variant '{}'", where, variant));
  if (kernel.empty() || has_kernel(*v, kernel)) return;
  throw UsageError(fmt::format("{}: variant '{}' has no kernel '{}'", where, variant, kernel));
}

}  // namespace

CLI::App* add_diagnose(CLI::App& root, DiagnoseOptions& options) {
  auto* cmd = root.add_subcommand(
      "diagnose", "Say what limits each kernel and what to do: run a lab, or read --report");
  cmd->add_option("lab", options.run.lab, "Lab to run and diagnose (see gpulab list)");
  add_lab_options(cmd, options.run);
  cmd->add_option("--report", options.report_path, "Diagnose a saved report (no GPU needed)");
  cmd->add_option("--kernel", options.kernel, "Only this kernel (timeline: a traced variant's timeline)");
  cmd->add_flag("--list-thresholds", options.list_thresholds,
                "List the thresholds and their defaults");
  options.run.diagnose = true;
  return cmd;
}

int run_diagnose(DiagnoseOptions& options, Session& session, Io& io,
                 const std::vector<std::string>& argv) {
  if (options.list_thresholds) {
    io.out << thresholds_text();
    return 0;
  }
  auto& run = options.run;
  if (run.lab.empty() == options.report_path.empty())
    throw UsageError("diagnose needs a lab to run or --report FILE (one of the two)");

  const std::string variant = run.settings.variants == "all" ? "" : run.settings.variants;
  report::Report report;
  if (!options.report_path.empty()) {
    const auto thresholds = parse_thresholds(run.thresholds);
    report = report::load_report(options.report_path);
    require_variant_and_kernel(report, variant, options.kernel, "'" + options.report_path + "'");
    diagnose_into(report, thresholds);
    session.remember(report);
    if (!run.json_path.empty()) report::save_report(run.json_path, report);
  } else {
    if (variant.find(',') != std::string::npos)
      throw UsageError("diagnose takes one variant or all");
    report = execute_lab(run, session, io, argv);
    require_variant_and_kernel(report, variant, options.kernel, "lab '" + run.lab + "'");
  }
  if (run.format == "json") {
    io.out << report::to_json(report).dump(2) << "\n";
  } else if (run.format == "csv") {
    io.out << report::findings_csv(report);
  } else {
    io.out << report::render_diagnosis(report, variant, options.kernel, text_style(run.format, io));
  }
  return exit_code_of(report);
}

}  // namespace gpulab::app
