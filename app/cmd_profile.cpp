// `gpulab profile -- APP [ARGS...]`: the report and diagnosis of labs, for any CUDA program. The
// program runs unmodified as gpulab's child, with the injection library (inject/) loaded into it
// by the CUDA driver (CUDA_INJECTION64_PATH); the library writes records into a private folder,
// and gpulab turns them into a report once the program has ended, however it ended.
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "app/profile_plan.hpp"
#include "app/program_launcher.hpp"
#include "app/record_folder.hpp"
#include "app/session.hpp"
#include "app/utc_time.hpp"
#include "app/version.hpp"
#include "reports/base/errors.hpp"
#include "reports/derived.hpp"
#include "reports/diagnosis/occupancy_limit.hpp"
#include "reports/profile_records.hpp"
#include "reports/program_report.hpp"
#include "reports/render/escape.hpp"
#include "reports/report.hpp"
#include "reports/report_json.hpp"

namespace gpulab::app {
namespace {

// The library's file name, and where an installed gpulab keeps it relative to its binary
// (CMakeLists.txt installs it there); a build tree has it beside the binary.
constexpr const char* kInjectionFile = "libgpulab_inject.so";
constexpr const char* kInstalledInjectionDir = "../lib/gpulab";

std::string executable_dir() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  const std::string exe(path, static_cast<std::size_t>(n));
  return exe.substr(0, exe.find_last_of('/'));
}

bool readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// GPULAB_INJECTION_LIBRARY names another build of it (tests, development).
std::string injection_library() {
  if (const char* given = std::getenv("GPULAB_INJECTION_LIBRARY"); given && *given) {
    if (!readable(given))
      throw UsageError(
          fmt::format("GPULAB_INJECTION_LIBRARY names '{}', which cannot be read", given));
    return given;
  }
  const std::string dir = executable_dir();
  for (const std::string& candidate :
       {dir + "/" + kInjectionFile, dir + "/" + kInstalledInjectionDir + "/" + kInjectionFile})
    if (readable(candidate)) return candidate;
  throw Error(ExitCode::internal,
              fmt::format("the injection library {} is missing (looked beside {} and in {}): "
                          "reinstall gpulab, or set GPULAB_INJECTION_LIBRARY",
                          kInjectionFile, dir, dir + "/" + kInstalledInjectionDir));
}

}  // namespace

CLI::App* add_profile(CLI::App& root, ProfileOptions& options) {
  auto* cmd = root.add_subcommand(
      "profile",
      "Run a CUDA program and report its kernels: counters, times, diagnosis (exits with the "
      "program's status)");
  cmd->add_option("--kernel,-k", options.kernel,
                  "Profile only kernels whose demangled name matches this regular expression "
                  "(the others are timed)");
  cmd->add_option("--nvtx-include", options.nvtx_include,
                  "Profile only launches inside these NVTX ranges, in ncu's syntax: A/ push/pop, "
                  "A start/end, D@A of domain D, [A/*/B] (repeatable: any of them)")
      ->type_name("EXPR");
  cmd->add_option("--nvtx-exclude", options.nvtx_exclude,
                  "Leave unprofiled the launches inside these NVTX ranges (repeatable)")
      ->type_name("EXPR");
  cmd->add_option("--capture-range", options.capture_range,
                  "cudaProfilerApi: profile only between cudaProfilerStart and cudaProfilerStop "
                  "(default none: from the start)")
      ->check(one_of({"none", "cudaProfilerApi"}));
  cmd->add_option("--launch-skip", options.launch_skip,
                  "Matching launches to leave unprofiled before the first profiled one")
      ->check(integer_in(0, std::int64_t{1} << 40));
  cmd->add_option("--launch-count,-c", options.launch_count,
                  "Most launches to profile, or all (default 100; later ones are timed)");
  cmd->add_option("--metrics,-m", options.metrics,
                  "Metric set (basic, stalls, full) or comma-separated metrics (default basic; "
                  "full with --diagnose)");
  cmd->add_option("--replay", options.replay,
                  "batch (default): consecutive launches replayed together from saved memory; "
                  "kernel: CUPTI replays each launch on its own; none: times and launch "
                  "attributes only, nothing serialized (kernels that wait on others)")
      ->check(one_of({"kernel", "batch", "none"}));
  cmd->add_flag("--source", options.source,
                "Also collect per-instruction counters and warp-stall samples of each profiled "
                "function's first profiled launch (replayed twice more from saved memory, "
                "untimed; batch replay): 'gpulab source --report FILE' shows them by line");
  cmd->add_flag("--trace", options.trace,
                "Record the whole program's timeline instead (kernels, copies, memsets, "
                "unified memory), no counters");
  cmd->add_option("--kernel-timeout", options.kernel_timeout,
                  "Stop the program when one profiled launch takes longer (seconds; 0: never)")
      ->check(number_in(0, 86400));
  cmd->add_flag("--diagnose,-d", options.diagnose, "Diagnose every profiled launch");
  cmd->add_option("--threshold,-t", options.thresholds,
                  "Override a diagnosis threshold NAME=VALUE (repeatable)");
  cmd->add_flag("--all-findings", options.all_findings,
                "Show every finding of each kernel (default: the three ranked first)");
  cmd->add_option("--json", options.json_path, "Also write the report here ('-': stdout)")
      ->type_name("FILE");
  add_format_option(*cmd, options.format);
  cmd->add_option("command", options.command,
                  "The program and its arguments: every word from the program on is the "
                  "program's, options included (`--` before it is optional)");
  return cmd;
}

std::vector<std::string> split_off_program(std::vector<std::string>& args,
                                           const CLI::App& profile) {
  const auto is_option = [](const std::string& w) { return w.size() > 1 && w[0] == '-'; };
  std::size_t i = 0;
  while (i < args.size() && is_option(args[i])) ++i;  // gpulab's own flags (--version)
  if (i == args.size() || args[i] != profile.get_name()) return {};
  for (++i; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      std::vector<std::string> program(args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                       args.end());
      args.resize(i);
      return program;
    }
    if (!is_option(word)) break;
    // An option that takes a value takes the next word, unless it came with `=` or, for a short
    // name, attached (-c5).
    const bool long_name = word.rfind("--", 0) == 0;
    if (word.find('=') != std::string::npos || (!long_name && word.size() > 2)) continue;
    const CLI::Option* option = profile.get_option_no_throw(word);
    if (option && takes_value(*option)) ++i;
  }
  std::vector<std::string> program(
      args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())), args.end());
  args.resize(std::min(i, args.size()));
  return program;
}

int run_profile(const ProfileOptions& options, Session& session, Io& io,
                const std::vector<std::string>& argv) {
  const ProfilePlan plan = plan_profile(options);
  const auto thresholds = parse_thresholds(options.thresholds);
  RecordFolder folder;
  const report::InjectionConfig config = injection_config(plan, options, folder.path());
  // The same library for the driver and for NVTX (inject/nvtx_ranges.hpp).
  const std::string library = injection_library();
  std::map<std::string, std::string> environment{
      {"CUDA_INJECTION64_PATH", library},
      {"NVTX_INJECTION64_PATH", library},
      {report::kInjectionConfigVariable, report::to_json_text(config)}};
  // --source: CUPTI samples only the modules that load while sampling is enabled, which it is
  // from each context's creation to the first counters (inject/source_replay.cpp); eager loading
  // loads a program's own modules then, not at each kernel's first launch. A choice the program's
  // environment already makes is kept.
  if (plan.source && !std::getenv("CUDA_MODULE_LOADING"))
    environment["CUDA_MODULE_LOADING"] = "EAGER";
  const ProgramEnd end = run_program(options.command, environment);

  report::ProgramInfo program;
  program.argv = options.command;
  program.exit_code = end.exit_code;
  if (end.signal) program.signal = signal_name(end.signal);
  program.ended = end.describe();
  program.wall_seconds = end.wall_seconds;
  program.replay = report::to_string(plan.replay);
  program.kernel_filter = options.kernel;
  program.nvtx_include = options.nvtx_include;
  program.nvtx_exclude = options.nvtx_exclude;
  program.capture_range = options.capture_range;
  program.source = plan.source;
  program.launch_skip = config.launch_skip;
  program.launch_count = config.launch_count;
  program.rank = plan.rank;
  report::RecordSet records;
  {
    // Read and removed whole: a SIGTERM meanwhile waits until the folder is gone.
    SignalsHeld held;
    records = folder.read();
    folder.remove();
  }
  report::Report report = report::program_report(program, records, plan.metric_set);

  report.tool.version = kVersion;
  report.tool.git_sha = kGitSha;
  report.argv = {"gpulab"};
  report.argv.insert(report.argv.end(), argv.begin(), argv.end());
  report.created_utc = utc_now();
  const std::string chip = report.device.chip;
  const int cupti_version = report.device.cupti_version;
  try {
    report.device =
        session.device();  // after the program: nothing of gpulab's on the GPU meanwhile
    if (report.device.chip.empty()) report.device.chip = chip;
    if (cupti_version) report.device.cupti_version = cupti_version;
  } catch (const Error& e) {
    report.warnings.push_back(fmt::format("the device could not be described: {}", e.what()));
  }
  report::complete_occupancy(report);
  if (report.program->processes.empty() && end.exit_code)
    report.warnings.push_back(
        "the program made no CUDA driver call that loads the injection "
        "library: no kernels to report");
  if (options.diagnose) {
    // The functions --kernel chose are diagnosed whatever their share of the program's time.
    report::KernelAsked chosen;
    if (!options.kernel.empty()) chosen = [](const report::Kernel&) { return true; };
    diagnose_into(report, thresholds, chosen);
  } else {
    report::derive_all(report);
  }
  session.remember(report);
  Io text = text_io(io, {plan.json_path});
  print_report(report, options.format, text, options.all_findings);
  const int saved = save_outputs({report_file(plan.json_path, report)}, io);

  const auto& processes = report.program->processes;
  if (!processes.empty() && std::all_of(processes.begin(), processes.end(),
                                        [](const report::ProcessInfo& p) { return p.refused; })) {
    io.err << "gpulab: error: CUPTI refused every process of the program: "
           << report::terminal_safe(processes.front().note) << "\n";
    return static_cast<int>(ExitCode::no_gpu);
  }
  // The program's own status first: a failed save is one warning line above.
  return end.shell_status() != 0 ? end.shell_status() : saved;
}

}  // namespace gpulab::app
