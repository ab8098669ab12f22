// Defaults that several commands share are decided in one function each: the metric set a run
// collects when --metrics names none (app/metric_choice.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "app/metric_choice.hpp"

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

// No other file of app/ or inject/ names a metric set to fall back on.
TEST(MetricChoice, IsDecidedInOnePlace) {
  const fs::path root = GPULAB_SOURCE_DIR;
  for (const char* folder : {"app", "inject"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
      if (entry.path().filename().string().rfind("metric_choice.", 0) == 0) continue;
      std::ostringstream text;
      text << std::ifstream(entry.path()).rdbuf();
      for (const char* set : {"\"basic\"", "\"full\"", "\"stalls\""})
        EXPECT_EQ(text.str().find(set), std::string::npos)
            << entry.path().lexically_relative(root) << " names " << set;
    }
  }
}

}  // namespace
}  // namespace gpulab::app
