// Defaults that several commands share are decided in one function each: the metric set a run
// collects when --metrics names none (app/metric_choice.hpp), the output formats' names
// (app/output_format.hpp), and everything `gpulab profile`
// does, from its options, in its plan (app/profile_plan.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "app/lab_replay.hpp"
#include "app/metric_choice.hpp"
#include "app/output_format.hpp"
#include "app/profile_plan.hpp"
#include "reports/base/errors.hpp"

namespace gpulab::app {
namespace {

namespace fs = std::filesystem;

// A run's use of counters: traced, replayed, diagnosed.
CounterUse use(bool traced, bool replayed, bool diagnosed) {
  CounterUse u;
  u.traced = traced;
  u.replayed = replayed;
  u.diagnosed = diagnosed;
  return u;
}

TEST(MetricChoice, UnaskedTheSetFollowsWhatTheRunIsFor) {
  EXPECT_EQ(metric_set_for("", use(false, true, false)), "basic");
  EXPECT_EQ(metric_set_for("", use(false, true, true)), "full");
  EXPECT_EQ(metric_set_for("", use(true, true, true)), "none")
      << "a traced run is diagnosed from its timeline";
  EXPECT_EQ(metric_set_for("", use(false, false, true)), "none") << "profile --replay none";
  EXPECT_EQ(metric_set_for("stalls", use(false, true, true)), "stalls") << "asked is asked";
  EXPECT_EQ(metric_set_for("dram__bytes_read.sum", use(false, true, false)),
            "dram__bytes_read.sum");
}

// No file of app/ or inject/ but `owner` (its .hpp and .cpp) spells any of `words`.
void expect_spelled_only_in(const std::string& owner, std::initializer_list<const char*> words) {
  const fs::path root = GPULAB_SOURCE_DIR;
  for (const char* folder : {"app", "inject"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (entry.path().stem() == owner) continue;
      std::ostringstream text;
      text << std::ifstream(entry.path()).rdbuf();
      for (const char* word : words)
        EXPECT_EQ(text.str().find(std::string("\"") + word + "\""), std::string::npos)
            << entry.path().lexically_relative(root) << " spells \"" << word << "\"";
    }
  }
}

TEST(MetricChoice, IsDecidedInOnePlace) {
  expect_spelled_only_in("metric_choice", {"basic", "full", "stalls"});
}

TEST(OutputFormat, IsSpelledInOnePlace) {
  for (OutputFormat f : kEveryFormat) EXPECT_EQ(output_format_from_string(to_string(f)), f);
  EXPECT_EQ(output_format_from_string("html"), std::nullopt) << "an HTML page is report -o's";
  expect_spelled_only_in("output_format", {"text", "json", "markdown", "csv"});
}

// A lab run's cache control follows its replay when not given: CUPTI's kernel replay cannot
// flush between its passes.
TEST(LabReplay, TheCacheControlFollowsTheReplayWhenNotGiven) {
  EXPECT_EQ(default_cache_control(LabReplay::variant), CacheControl::all);
  EXPECT_EQ(default_cache_control(LabReplay::kernel), CacheControl::none);
  EXPECT_STREQ(to_string(LabReplay::kernel), "kernel");
  EXPECT_STREQ(to_string(CacheControl::none), "none");
}

ProfileOptions profile_of(const std::string& replay, bool trace, bool diagnose,
                          const std::string& metrics = "") {
  ProfileOptions o;
  o.command = {"./app"};
  o.replay = replay;
  o.trace = trace;
  o.diagnose = diagnose;
  o.metrics = metrics;
  return o;
}

TEST(ProfilePlan, TheReplayAndTheCountersAreDecidedOnce) {
  using report::InjectionMode;
  using report::ReplayMode;
  const ProfilePlan plain = plan_profile(profile_of("batch", false, false));
  EXPECT_EQ(plain.mode, InjectionMode::counters);
  EXPECT_EQ(plain.replay, ReplayMode::batch);
  EXPECT_EQ(plain.metric_set, "basic");
  EXPECT_FALSE(plain.metrics.empty());
  EXPECT_EQ(plain.launch_count, 100);

  const ProfilePlan traced = plan_profile(profile_of("kernel", true, true));
  EXPECT_EQ(traced.mode, InjectionMode::trace);
  EXPECT_EQ(traced.replay, ReplayMode::none) << "a traced run replays nothing";
  EXPECT_EQ(traced.metric_set, "none");
  EXPECT_TRUE(traced.metrics.empty());

  const ProfilePlan untimed = plan_profile(profile_of("none", false, true));
  EXPECT_EQ(untimed.replay, ReplayMode::none);
  EXPECT_EQ(untimed.metric_set, "none");
  EXPECT_EQ(plan_profile(profile_of("kernel", false, true)).metric_set, "full");
  EXPECT_EQ(plan_profile(profile_of("kernel", false, false, "dram__bytes_read.sum")).metric_set,
            "custom");

  const report::InjectionConfig config =
      injection_config(untimed, profile_of("none", false, true), "records");
  EXPECT_EQ(config.replay, ReplayMode::none);
  EXPECT_EQ(config.output_dir, "records");
  EXPECT_THROW(plan_profile(profile_of("user", false, false)), UsageError);
  EXPECT_THROW(plan_profile(profile_of("none", false, false, "full")), UsageError);
}

}  // namespace
}  // namespace gpulab::app
