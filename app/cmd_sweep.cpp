// `gpulab sweep LAB --axis NAME=VALUES [--axis ...]`: the lab run at every point of the axes
// (their product, or with --zip their values paired), each point a whole lab report, timed
// adaptively unless --repeat fixes the count; one sweep report of them all.
#include <algorithm>
#include <csignal>
#include <optional>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/interrupt.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "app/sweep_axes.hpp"
#include "app/utc_time.hpp"
#include "app/version.hpp"
#include "labs/harness/registry.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/render/render_sweep.hpp"
#include "reports/sweep_json.hpp"

namespace gpulab::app {

CLI::App* add_sweep(CLI::App& root, SweepOptions& options) {
  auto* cmd = root.add_subcommand(
      "sweep",
      "Run a lab across sizes and parameters: time, bandwidth and diagnosis at each point");
  cmd->add_option("lab", options.run.lab, "Lab to sweep (see gpulab list)");
  cmd->add_option("--axis", options.axes,
                  "NAME=VALUES: size or a lab parameter, and a list (1024,4096), a geometric "
                  "range (1Ki:256Mi:*2) or a linear one (32:1024:+32); repeatable: the points "
                  "are the axes' product")
      ->type_name("NAME=VALUES")
      ->allow_extra_args(false);
  cmd->add_flag("--zip", options.zip,
                "Pair the axes' values one by one (the first of each, then the second, ...) "
                "instead of taking their product");
  cmd->add_flag("--yes", options.yes,
                fmt::format("Run a sweep of more than {} points", kMaxPointsWithoutYes));
  add_lab_options(cmd, options.run);
  cmd->add_flag("--diagnose,-d", options.run.diagnose,
                "Walk the decision tree at every point, and say where the principal finding "
                "changes along each axis");
  return cmd;
}

namespace {

// The axes, each checked against the options that would set the same parameters.
std::vector<SweepAxis> checked_axes(const SweepOptions& options) {
  std::vector<SweepAxis> axes;
  for (const auto& text : options.axes) axes.push_back(parse_axis(text));
  const auto& cmd = *options.run.command;
  for (const auto& a : axes) {
    if (a.name == "size" && cmd.get_option("--size")->count() > 0)
      throw UsageError("sweep: --size does not apply (--axis size sweeps it)");
    for (const auto& p : options.run.params)
      if (p.rfind(a.name + "=", 0) == 0)
        throw UsageError(
            fmt::format("sweep: --param {} does not apply (--axis {} sweeps it)", p, a.typed));
  }
  return axes;
}

// The run of one point: the sweep's options with the point's values, and no file of its own
// (the points' reports go into the sweep's).
RunOptions point_options(const SweepOptions& options, const SweepPoint& at) {
  RunOptions one = options.run;
  one.json_path.clear();
  for (const auto& [name, value] : at) {
    if (name == "size")
      one.settings.size = value;
    else
      one.settings.params[name] = value;
  }
  return one;
}

// What stopped the sweep, for its last line.
const char* stopped_by(int signo) {
  switch (signo) {
    case SIGTERM:
      return "stopped by SIGTERM";
    case SIGHUP:
      return "stopped by SIGHUP";
    default:
      return "interrupted";
  }
}

}  // namespace

int run_sweep(SweepOptions& options, Session& session, Io& io,
              const std::vector<std::string>& argv) {
  RunOptions& run = options.run;
  if (run.lab.empty())
    throw UsageError("sweep needs a lab (see gpulab list) and --axis NAME=VALUES");
  const auto& lab = labs::lab_or_throw(run.lab).spec();
  refuse_given(*run.command, {"--source", "--embed-source"}, "sweep",
               "per-instruction data is for one point: gpulab run LAB --source");
  if (!run.diagnose)
    refuse_given(*run.command, {"--threshold", "--all-findings"}, "sweep",
                 "it shapes a diagnosis: add --diagnose");
  const auto axes = checked_axes(options);
  const auto points = sweep_points(axes, options.zip);
  check_sweep(lab, axes, points.size(), options.yes);
  labs::select_variants(lab, run.settings.variants);
  // Adaptive timing unless --repeat fixes the count.
  const bool fixed = run.command->get_option("--repeat")->count() > 0 && !run.max_noise_percent;
  run.settings.until_quiet = timing_rule(run, !fixed);
  // Every point's parameters, checked before any GPU work: a combination the lab refuses must
  // not end the sweep halfway.
  for (const auto& at : points) {
    const RunSettings s = lab_settings(point_options(options, at));
    labs::resolve_params(lab, s.size, s.params);
  }
  // A curve needs no counters: none unless asked for, or needed by the diagnosis.
  if (run.settings.metrics.empty() && !run.diagnose) run.settings.metrics = "none";
  if (!run.json_path.empty()) check_output(run.json_path);

  report::Sweep sweep;
  sweep.tool = {"gpulab", kVersion, kGitSha};
  sweep.argv = {"gpulab"};
  sweep.argv.insert(sweep.argv.end(), argv.begin(), argv.end());
  sweep.created_utc = utc_now();
  sweep.lab = lab.name;
  sweep.zip = options.zip;
  for (const auto& a : axes) sweep.axes.push_back({a.name, a.values});

  // Outside the interactive shell, a signal that would end the process (Ctrl-C, `timeout`'s or a
  // batch system's SIGTERM, a closed terminal's SIGHUP) stops the sweep at its next safe point
  // instead: the points measured so far are written, then the process ends as the signal would
  // have ended it. (The shell's Ctrl-C stops the command and keeps the shell.)
  std::optional<InterruptScope> stop_signals;
  if (!io.interactive) stop_signals.emplace({SIGINT, SIGTERM, SIGHUP});
  int code = 0;
  bool interrupted = false;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::string where;
    for (const auto& [name, value] : points[i])
      where += fmt::format("{}{}={}", where.empty() ? "" : " ", name, value);
    if (io.progress) io.err << fmt::format("gpulab: [{}/{}] {}\n", i + 1, points.size(), where);
    try {
      auto report = execute_lab(point_options(options, points[i]), session, io, argv);
      code = std::max(code, exit_code_of(report));
      sweep.points.push_back({points[i], std::move(report)});
    } catch (const Interrupted&) {
      // The points measured so far are the sweep.
      interrupted = true;
      break;
    }
  }
  stop_signals.reset();  // a signal from here on ends the process, as without a sweep

  Io text = text_io(io, {run.json_path});
  if (run.format == OutputFormat::json)
    text.out << report::to_json(sweep).dump(2) << "\n";
  else if (run.format == OutputFormat::csv)
    text.out << report::sweep_csv(sweep);
  else
    text.out << report::render_sweep_text(sweep, text_style(run.format, io, run.all_findings),
                                          io.columns);
  if (interrupted)
    io.err << fmt::format("gpulab: {} after {} of {} points; the sweep holds those\n",
                          stopped_by(interrupting_signal()), sweep.points.size(), points.size());
  code = save_outputs({sweep_file(run.json_path, sweep)}, io, code);
  if (interrupted && !io.interactive) end_as_signal(interrupting_signal());
  return interrupted ? static_cast<int>(ExitCode::interrupted) : code;
}

}  // namespace gpulab::app
