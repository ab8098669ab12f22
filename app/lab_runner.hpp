// Turns one lab run into a report: correctness, then timing, then counters, for each variant.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/lab_replay.hpp"
#include "app/session.hpp"
#include "labs/harness/lab.hpp"
#include "reports/noise_stop.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::app {

struct RunSettings {
  std::string variants = "all";
  std::optional<std::int64_t> size;
  std::map<std::string, std::int64_t> params;
  std::optional<int> warmup;  // unset: the lab's default (LabSpec::default_warmup)
  std::optional<int> repeat;  // unset: the lab's default (LabSpec::default_repeat)
  // Set: adaptive timing (labs::time_until_quiet) instead of `repeat` timed launches.
  std::optional<report::NoiseRule> until_quiet;
  bool cold = false;
  std::string metrics;     // unset: app/metric_choice.hpp decides
  bool diagnosed = false;  // the report will be diagnosed (unset metrics: the full set)
  LabReplay replay = LabReplay::variant;
  std::optional<CacheControl> cache_control;  // unset: default_cache_control(replay)
  std::uint64_t seed = 20261130;
  bool progress = false;  // one line per step on stderr
  // Per-instruction counters and warp-stall samples into each kernel's `source`: two more
  // launches of each variant, after the counters, neither timed.
  bool source = false;
  // With `source`: the text of every file the sources' lines name, copied into the report.
  bool embed_source = false;
};

// Validates the settings against the lab first (UsageError before any GPU work), then:
//  1. per variant: poison outputs, launch once, check against the CPU reference;
//  2. per variant: time with CUDA events (warm-up, then `repeat` timed launches, or as many as
//     adaptive timing's rule takes);
//  3. traced labs: per variant, one more launch recorded by the activity tracer;
//  4. counters for every variant, after all timing is done (counters perturb timing, and
//     timing must not perturb counters): see profile_variant in lab_runner.cpp;
//  5. with `source`: per variant, one patched launch and one sampled launch
//     (app/source_collector.hpp).
report::Report run_lab(Session& session, const labs::Lab& lab, const RunSettings& settings,
                       const std::vector<std::string>& argv);

}  // namespace gpulab::app
