#include "app/profile_plan.hpp"

#include <regex>

#include <fmt/format.h>

#include "app/job_rank.hpp"
#include "app/metric_choice.hpp"
#include "reports/base/errors.hpp"
#include "reports/base/output_file.hpp"
#include "reports/base/user_input.hpp"
#include "reports/metric_catalogue.hpp"
#include "reports/nvtx_filter.hpp"

namespace gpulab::app {
namespace {

std::int64_t parse_launch_count(const std::string& text) {
  if (text == "all") return 0;
  const std::int64_t n = parse_integer("--launch-count", text);
  if (n < 1)
    throw UsageError(fmt::format("--launch-count {} is not a count (1 or more, or all)", text));
  return n;
}

void check_kernel_filter(const std::string& filter) {
  if (filter.empty()) return;
  try {
    std::regex check(filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError(
        fmt::format("--kernel '{}' is not a regular expression: {}", filter, e.what()));
  }
}

}  // namespace

ProfilePlan plan_profile(const ProfileOptions& o, const NameSources& here) {
  if (o.command.empty())
    throw UsageError("profile needs a program: gpulab profile [OPTIONS] -- APP [ARGS...]");
  check_kernel_filter(o.kernel);
  const report::NvtxFilter nvtx(o.nvtx_include, o.nvtx_exclude);  // refuses a malformed one
  if (o.capture_range != "none" && o.capture_range != "cudaProfilerApi")
    throw UsageError(
        fmt::format("--capture-range {}: expected none or cudaProfilerApi", o.capture_range));
  if (o.trace && (!nvtx.empty() || o.capture_range != "none"))
    throw UsageError(
        "--trace records the whole timeline: --nvtx-include, --nvtx-exclude and "
        "--capture-range choose launches to profile");
  const auto replay = report::replay_mode_from_string(o.replay);
  if (!replay)
    throw UsageError(fmt::format("--replay {}: expected kernel, batch or none", o.replay));
  if (o.trace && !o.metrics.empty())
    throw UsageError("--trace and --metrics: a traced run collects no counters (profile twice)");
  if (o.source && o.trace)
    throw UsageError("--trace and --source: a traced run profiles no launch (profile twice)");
  if (o.source && *replay != report::ReplayMode::batch)
    throw UsageError(fmt::format(
        "--source replays each profiled function's first launch from its saved memory, as "
        "batch replay does: drop --replay {}",
        o.replay));
  if (*replay == report::ReplayMode::none && !o.metrics.empty())
    throw UsageError("--replay none collects no counters: drop --metrics");
  if (!o.diagnose && !o.thresholds.empty())
    throw UsageError("--threshold shapes a diagnosis: add --diagnose");
  if (!o.diagnose && o.all_findings)
    throw UsageError("--all-findings shapes a diagnosis: add --diagnose");
  ProfilePlan plan;
  plan.rank = detect_rank(here.variable, here.host);
  if (!o.json_path.empty()) {
    refuse_one_file_for_all_ranks("--json", o.json_path, plan.rank);
    plan.json_path = o.json_path == kStandardStream
                         ? o.json_path
                         : expand_output_name("--json", o.json_path, here);
    check_output(plan.json_path);
  }
  plan.mode = o.trace ? report::InjectionMode::trace : report::InjectionMode::counters;
  // A traced run replays nothing, whatever --replay says.
  plan.replay = o.trace ? report::ReplayMode::none : *replay;
  CounterUse use;
  use.traced = o.trace;
  use.replayed = plan.replay != report::ReplayMode::none;
  use.diagnosed = o.diagnose;
  const std::string set = metric_set_for(o.metrics, use);
  plan.metrics = report::metrics::resolve("--metrics", set);
  plan.metric_set = report::metrics::is_set_name(set) ? set : "custom";
  plan.launch_count = parse_launch_count(o.launch_count);
  plan.source = o.source;
  return plan;
}

report::InjectionConfig injection_config(const ProfilePlan& plan, const ProfileOptions& o,
                                         const std::string& record_dir) {
  report::InjectionConfig c;
  c.mode = plan.mode;
  c.kernel_filter = o.kernel;
  c.nvtx_include = o.nvtx_include;
  c.nvtx_exclude = o.nvtx_exclude;
  c.profiler_api_range = o.capture_range == "cudaProfilerApi";
  c.launch_skip = o.launch_skip;
  c.launch_count = plan.launch_count;
  c.replay = plan.replay;
  c.metrics = plan.metrics;
  c.watchdog_seconds = o.kernel_timeout;
  c.source = plan.source;
  c.output_dir = record_dir;
  return c;
}

}  // namespace gpulab::app
