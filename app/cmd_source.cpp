// `gpulab source`: a kernel's source with its hot lines marked, from a report that holds the
// kernel's per-instruction data (its `source` section), or from a lab measured now with
// `run --source` (no counters, one timed launch). No GPU needed with --report.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/lab_runner.hpp"
#include "app/session.hpp"
#include "app/source_files.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/kernel_name.hpp"
#include "reports/render/render_source.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

bool kernel_matches(const report::Kernel& k, const std::string& wanted) {
  return wanted.empty() || k.name == wanted || k.function.find(wanted) != std::string::npos ||
         k.mangled_name == wanted;
}

}  // namespace

CLI::App* add_source(CLI::App& root, SourceOptions& options) {
  auto* cmd = root.add_subcommand("source",
                                  "Show a kernel's source with its hot lines and their counters (a "
                                  "lab measured now, or --report FILE)");
  cmd->add_option("lab", options.lab,
                  "Lab whose kernels to measure now, with run --source (needs a GPU)");
  cmd->add_option("--report", options.report_path,
                  "Show the kernels of a saved report that holds per-instruction data (no GPU)")
      ->type_name("FILE");
  cmd->add_option("--variant", options.variant, "Only this variant's kernels")->type_name("NAME");
  cmd->add_option("--kernel", options.kernel,
                  "Only this kernel: its name, or a part of its function's signature")
      ->type_name("NAME");
  cmd->add_flag("--sass", options.sass, "Show each shown line's SASS instructions under it");
  return cmd;
}

namespace {

// The views of `r`'s kernels that the options select; `from` names the report in messages.
void show_sources(const report::Report& r, const std::string& from, const SourceOptions& options,
                  Io& io) {
  report::Style style;
  style.color = io.color;
  report::SourceViewOptions view;
  view.sass = options.sass;
  int shown = 0, matched = 0;
  for (const auto& v : r.variants) {
    if (!options.variant.empty() && v.name != options.variant) continue;
    for (const auto& k : v.kernels) {
      if (!kernel_matches(k, options.kernel)) continue;
      ++matched;
      if (!k.source) continue;
      const std::string function =
          k.function.empty() ? k.source->function : report::display_name(k.function);
      std::string title = fmt::format("{} / {}", v.name, k.name);
      if (function != k.name) title += ": " + function;
      io.out << (shown++ ? "\n" : "")
             << report::render_source(title, *k.source, view, source_text(*k.source), style);
    }
  }
  if (matched == 0)
    throw UsageError(fmt::format("{} has no kernel{}{}", from,
                                 options.variant.empty() ? "" : " in variant " + options.variant,
                                 options.kernel.empty() ? "" : " named " + options.kernel));
  if (shown == 0)
    throw UsageError(fmt::format(
        "{}: no kernel holds per-instruction data (a `source` section): its kernels were "
        "measured without it",
        from));
}

}  // namespace

int run_source(const SourceOptions& options, Session& session, Io& io,
               const std::vector<std::string>& argv) {
  if (options.lab.empty() == options.report_path.empty())
    throw UsageError("source needs a lab to measure or --report FILE (one of the two)");
  if (options.report_path.empty()) {
    const auto& lab = labs::lab_or_throw(options.lab);
    try {
      session.device();
    } catch (const NoGpuError& e) {
      throw NoGpuError(
          fmt::format("source {}: measuring needs a GPU ({}); gpulab source --report "
                      "FILE shows a saved report's kernels",
                      options.lab, e.what()));
    }
    RunSettings settings;
    settings.variants = options.variant.empty() ? "all" : options.variant;
    settings.repeat = 1;
    settings.warmup = 0;
    settings.metrics = "none";
    settings.source = true;
    settings.progress = io.progress;
    const report::Report r = run_lab(session, lab, settings, argv);
    for (const auto& w : r.warnings) io.err << "warning: " << w << "\n";
    show_sources(r, "lab " + options.lab, options, io);
    return static_cast<int>(ExitCode::ok);
  }
  show_sources(report::load_report(options.report_path), "'" + options.report_path + "'", options,
               io);
  return static_cast<int>(ExitCode::ok);
}

}  // namespace gpulab::app
