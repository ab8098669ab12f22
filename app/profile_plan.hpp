// What `gpulab profile` does, resolved once from its options: every choice made and checked here,
// before anything is made (the record folder, the program), then only read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "reports/profile_records.hpp"

namespace gpulab::app {

struct ProfilePlan {
  report::InjectionMode mode = report::InjectionMode::counters;
  report::ReplayMode replay = report::ReplayMode::batch;  // none when tracing
  std::string metric_set;            // as the report names it: basic, stalls, full, none, custom
  std::vector<std::string> metrics;  // the counters of each profiled launch
  std::int64_t launch_count = 0;     // 0: no limit
};

// Throws UsageError naming the option at fault.
ProfilePlan plan_profile(const ProfileOptions& options);

// The injection library's settings: the plan's, with the folder its records go to.
report::InjectionConfig injection_config(const ProfilePlan& plan, const ProfileOptions& options,
                                         const std::string& record_dir);

}  // namespace gpulab::app
