// What `run` and `diagnose LAB` share: the lab options, and running a lab into a report,
// diagnosed when asked.
#include "app/lab_execution.hpp"

#include <algorithm>
#include <limits>

#include "app/option_checks.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/base/user_input.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/diagnosis.hpp"
#include "reports/kernel_name.hpp"
#include "reports/report.hpp"

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
  cmd->add_option("--repeat,-r", s.repeat,
                  "Timed launches per variant (default: 20, or the "
                  "lab's own: gpulab list)")
      ->check(integer_in(1, 100000));
  cmd->add_option("--warmup", s.warmup,
                  "Untimed launches before timing (default: 5, or the "
                  "lab's own)")
      ->check(integer_in(0, 10000));
  cmd->add_option("--max-noise", options.max_noise_percent,
                  "Adaptive timing: time each variant until the relative standard deviation of "
                  "its samples is below PCT percent (nvbench's rule; docs/measurement.md)")
      ->type_name("PCT")
      ->check(number_in(0.001, 100));
  cmd->add_option("--min-samples", options.min_samples,
                  "Adaptive timing: at least N timed launches (default: 10)")
      ->check(integer_in(2, 1000000));
  cmd->add_option("--min-time", options.min_time_seconds,
                  "Adaptive timing: at least S seconds of GPU time in the samples (default: 0.5)")
      ->type_name("S")
      ->check(number_in(0, 3600));
  cmd->add_option("--timeout", options.timeout_seconds,
                  "Adaptive timing: stop after S seconds of timing a variant, quiet or not "
                  "(default: 15)")
      ->type_name("S")
      ->check(number_in(0.001, 3600));
  cmd->add_flag("--cold", s.cold, "Flush L2 before every timed launch");
  s.metrics.clear();  // unset: decided by app/metric_choice.hpp
  cmd->add_option("--metrics,-m", s.metrics,
                  "Counters: basic, stalls, full, none, or a comma-separated list of metric "
                  "names (default: basic; full when diagnosing; none for traced labs)");
  add_choice_option(*cmd, "--replay-mode", s.replay, kLabReplays,
                    "Counters: variant = gpulab replays the variant once per pass, kernel = CUPTI "
                    "replays each kernel, restoring memory between passes")
      ->default_str(to_string(s.replay));
  add_choice_option(*cmd, "--cache-control", s.cache_control, kCacheControls,
                    "Counters: all = flush L2 before every replay pass (as ncu does), none = "
                    "leave caches as the previous pass left them (default: all; none with "
                    "--replay-mode kernel)");
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

std::optional<report::NoiseRule> timing_rule(const RunOptions& options, bool by_default) {
  const bool adaptive = by_default || options.max_noise_percent.has_value();
  if (!adaptive) {
    refuse_given(*options.command, {"--min-samples", "--min-time", "--timeout"},
                 options.command->get_name(), "it shapes adaptive timing: add --max-noise PCT");
    return std::nullopt;
  }
  refuse_given(*options.command, {"--repeat"}, options.command->get_name(),
               "adaptive timing decides how many launches to time: leave out --repeat, or "
               "--max-noise and the options that shape it");
  report::NoiseRule rule;
  if (options.max_noise_percent) rule.max_noise = *options.max_noise_percent / 100;
  if (options.min_samples) rule.min_samples = *options.min_samples;
  if (options.min_time_seconds) rule.min_seconds = *options.min_time_seconds;
  if (options.timeout_seconds) rule.timeout_seconds = *options.timeout_seconds;
  return rule;
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

RunSettings lab_settings(const RunOptions& options) {
  RunSettings settings = options.settings;
  for (const auto& p : options.params) {
    const auto [name, value] = parse_param(p);
    settings.params[name] = value;
  }
  settings.diagnosed = options.diagnose;  // the counters it needs: app/metric_choice.hpp
  if (!settings.until_quiet) settings.until_quiet = timing_rule(options, false);
  if (settings.embed_source && !settings.source)
    throw UsageError("--embed-source copies the files --source collects lines of: add --source");
  return settings;
}

report::Report execute_lab(const RunOptions& options, Session& session, Io& io,
                           const std::vector<std::string>& argv) {
  // Validate everything that can be validated before the GPU is touched.
  const auto& lab = labs::lab_or_throw(options.lab);
  RunSettings settings = lab_settings(options);
  const auto thresholds = parse_thresholds(options.thresholds);
  if (!options.json_path.empty()) check_output(options.json_path);
  settings.progress = io.progress;

  std::vector<std::string> full_argv{"gpulab"};
  full_argv.insert(full_argv.end(), argv.begin(), argv.end());
  auto report = run_lab(session, lab, settings, full_argv);
  if (options.diagnose) diagnose_into(report, thresholds, kernels_named(options.diagnose_kernel));
  session.remember(report);
  return report;
}

}  // namespace gpulab::app
