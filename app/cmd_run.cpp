// `gpulab run LAB`: check, time and profile a lab's variants; print text or JSON, save JSON.
#include <fmt/format.h>

#include "app/commands.hpp"
#include "labs/registry.hpp"
#include "reports/atomic_file.hpp"
#include "reports/errors.hpp"
#include "reports/render_text.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

// "NAME=VALUE" with an integer VALUE.
std::pair<std::string, std::int64_t> parse_param(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("--param '{}': expected NAME=VALUE", text));
  const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  std::size_t used = 0;
  std::int64_t v = 0;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size())
    throw UsageError(fmt::format("--param {}: '{}' is not an integer", name, value));
  return {name, v};
}

}  // namespace

CLI::App* add_run(CLI::App& root, RunOptions& options) {
  auto& s = options.settings;
  auto* cmd = root.add_subcommand("run", "Check, time and profile the variants of a lab");
  cmd->add_option("lab", options.lab, "Lab to run (see gpulab list)")->required();
  cmd->add_option("--variant,-v", s.variants, "Variant name, comma-separated names, or all")
      ->capture_default_str();
  cmd->add_option("--size,-s", s.size, "Problem size (sets the lab's size parameters)");
  cmd->add_option("--param,-p", options.params, "Lab parameter NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--repeat,-r", s.repeat, "Timed launches per variant")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", s.warmup, "Untimed launches before timing")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  cmd->add_flag("--cold", s.cold, "Flush L2 before every timed launch");
  cmd->add_option("--metrics,-m", s.metrics,
                  "Counters: basic, none, or a comma-separated list of metric names")
      ->capture_default_str();
  cmd->add_option("--cache-control", s.cache_control,
                  "Counters: all = flush L2 before every replay pass (as ncu does), none = "
                  "leave caches warm and replay per kernel")
      ->check(CLI::IsMember({"all", "none"}))
      ->capture_default_str();
  cmd->add_option("--seed", s.seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--json", options.json_path, "Also write the report as JSON to this file");
  cmd->add_option("--format,-f", options.format, "Output on stdout")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  return cmd;
}

int run_run(RunOptions& options, Session& session, Io& io, const std::vector<std::string>& argv) {
  // Validate everything that can be validated before the GPU is touched.
  const auto& lab = labs::lab_or_throw(options.lab);
  for (const auto& p : options.params) {
    const auto [name, value] = parse_param(p);
    options.settings.params[name] = value;
  }
  if (!options.json_path.empty()) check_writable(options.json_path);
  options.settings.progress = io.progress;

  std::vector<std::string> full_argv{"gpulab"};
  full_argv.insert(full_argv.end(), argv.begin(), argv.end());
  const auto report = run_lab(session, lab, options.settings, full_argv);

  if (!options.json_path.empty()) report::save_report(options.json_path, report);
  if (options.format == "json") {
    io.out << report::to_json(report).dump(2) << "\n";
    for (const auto& w : report.warnings) io.err << "gpulab: warning: " << w << "\n";
  } else {
    io.out << report::render_text(report);
  }
  for (const auto& v : report.variants)
    if (v.check.status == report::CheckStatus::failed) return static_cast<int>(ExitCode::check_failed);
  return 0;
}

}  // namespace gpulab::app
