// `gpulab source`: a kernel's source with its hot lines marked, from a report that holds the
// kernel's per-instruction data (its `source` section). No GPU needed with --report.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/session.hpp"
#include "app/source_files.hpp"
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
  auto* cmd = root.add_subcommand(
      "source", "Show a kernel's source with its hot lines and their counters (--report FILE)");
  cmd->add_option("lab", options.lab, "Lab whose kernels to measure (needs a GPU)");
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

int run_source(const SourceOptions& options, Session& session, Io& io) {
  if (options.lab.empty() == options.report_path.empty())
    throw UsageError("source needs a lab to measure or --report FILE (one of the two)");
  if (!options.lab.empty()) {
    try {
      session.device();
    } catch (const NoGpuError& e) {
      throw NoGpuError(
          fmt::format("source {}: measuring needs a GPU ({}); gpulab source --report "
                      "FILE shows a saved report's kernels",
                      options.lab, e.what()));
    }
    throw UsageError(fmt::format(
        "source {}: this build reads per-instruction data from reports only: gpulab source "
        "--report FILE shows a report that holds it",
        options.lab));
  }
  const report::Report r = report::load_report(options.report_path);
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
    throw UsageError(fmt::format("'{}' has no kernel{}{}", options.report_path,
                                 options.variant.empty() ? "" : " in variant " + options.variant,
                                 options.kernel.empty() ? "" : " named " + options.kernel));
  if (shown == 0)
    throw UsageError(fmt::format(
        "'{}': no kernel holds per-instruction data (a `source` section): its kernels were "
        "measured without it",
        options.report_path));
  return static_cast<int>(ExitCode::ok);
}

}  // namespace gpulab::app
