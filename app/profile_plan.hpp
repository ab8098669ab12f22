// What `gpulab profile` does, resolved once from its options: every choice made and checked here,
// before anything is made (the record folder, the program), then only read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/output_names.hpp"
#include "reports/profile_records.hpp"
#include "reports/report.hpp"

namespace gpulab::app {

struct ProfilePlan {
  report::InjectionMode mode = report::InjectionMode::counters;
  report::ReplayMode replay = report::ReplayMode::batch;  // none when tracing
  std::string metric_set;            // as the report names it: basic, stalls, full, none, custom
  std::vector<std::string> metrics;  // the counters of each profiled launch
  std::int64_t launch_count = 0;     // 0: no limit
  bool source = false;  // per-instruction data of each function's first profiled launch
  std::string json_path;             // --json, its templates filled in (app/output_names.hpp)
  std::optional<report::RankInfo> rank;  // where gpulab runs as a rank of a job
};

// Throws UsageError naming the option at fault. `here` fills in the output names' templates
// and tells the job's rank.
ProfilePlan plan_profile(const ProfileOptions& options, const NameSources& here = this_process());

// The injection library's settings: the plan's, with the folder its records go to.
report::InjectionConfig injection_config(const ProfilePlan& plan, const ProfileOptions& options,
                                         const std::string& record_dir);

}  // namespace gpulab::app
