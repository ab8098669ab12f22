// From the activity tracer's raw records to a timeline's activities, on hand-made records with
// nanosecond timestamps: the warm-up dropped, the order, migrations merged, names, times, notes.
#include <gtest/gtest.h>

#include "reports/trace_assembly.hpp"

namespace gpulab::report {
namespace {

TraceRecord record(ActivityKind kind, const char* name, std::uint64_t start, std::uint64_t end,
                   std::uint64_t bytes = 0, const char* cause = "") {
  TraceRecord r;
  r.activity.kind = kind;
  r.activity.name = name;
  r.activity.bytes = bytes;
  r.activity.cause = cause;
  r.start = start;
  r.end = end;
  return r;
}

TraceRecord migration(const char* direction, const char* cause, std::uint64_t start,
                      std::uint64_t end, std::uint64_t bytes) {
  return record(ActivityKind::migration, direction, start, end, bytes, cause);
}

TEST(MergeMigrations, BackToBackRecordsOfOneDirectionAndCauseBecomeOne) {
  const auto merged = merge_migrations({
      migration("HtoD", "on-demand", 1000, 2000, 4096),
      record(ActivityKind::kernel, "k", 1500, 9000),  // between them: no obstacle
      migration("HtoD", "on-demand", 2000 + kMigrationMergeGapNs, 8000, 8192),
      migration("HtoD", "on-demand", 7000, 7500, 4096),  // inside the merged interval
  });
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].activity.kind, ActivityKind::migration);
  EXPECT_EQ(merged[0].start, 1000u);
  EXPECT_EQ(merged[0].end, 8000u) << "the latest end, not the last record's";
  EXPECT_EQ(merged[0].activity.bytes, 16384u);
  EXPECT_EQ(merged[0].activity.records, 3u);
  EXPECT_EQ(merged[1].activity.kind, ActivityKind::kernel);
}

TEST(MergeMigrations, GapsDirectionsAndCausesKeepRecordsApart) {
  const auto merged = merge_migrations({
      migration("HtoD", "on-demand", 1000, 2000, 1),
      migration("HtoD", "on-demand", 2001 + kMigrationMergeGapNs, 9000, 2),  // one ns too late
      migration("DtoH", "on-demand", 9000, 9100, 4),
      migration("HtoD", "prefetch", 9000, 9200, 8),
      migration("HtoD", "on-demand", 9100, 9300, 16),  // joins the second
  });
  ASSERT_EQ(merged.size(), 4u);
  EXPECT_EQ(merged[0].activity.bytes, 1u);
  EXPECT_EQ(merged[1].activity.bytes, 18u);
  EXPECT_EQ(merged[1].end, 9300u);
  EXPECT_EQ(merged[2].activity.name, "DtoH");
  EXPECT_EQ(merged[3].activity.cause, "prefetch");
}

TEST(AssembleActivities, DropsTheWarmupSortsAndMakesTimesRelative) {
  const auto activities = assemble_activities(
      {
          record(ActivityKind::copy, "DtoH", 5'000'000, 6'000'000, 64),
          record(ActivityKind::kernel, "warm", 100, 200),  // before `since`: the warm-up's
          record(ActivityKind::copy, "HtoD", 2'000'000, 3'000'000, 64),
          record(ActivityKind::kernel, "_Z4stepPfi", 3'000'000, 4'500'000),
          record(ActivityKind::memset, "memset", 2'000'000, 2'100'000),
      },
      1'000'000);
  ASSERT_EQ(activities.size(), 4u);
  EXPECT_EQ(activities[0].name, "HtoD") << "same start: copies before memsets (by kind)";
  EXPECT_EQ(activities[1].kind, ActivityKind::memset);
  EXPECT_EQ(activities[2].name, "step") << "kernel names demangled for display";
  EXPECT_EQ(activities[3].name, "DtoH");
  EXPECT_DOUBLE_EQ(activities[0].start, 0.0);
  EXPECT_DOUBLE_EQ(activities[0].end, 1e-3);
  EXPECT_DOUBLE_EQ(activities[2].start, 1e-3);
  EXPECT_DOUBLE_EQ(activities[2].end, 2.5e-3);
  EXPECT_DOUBLE_EQ(activities[3].end, 4e-3);
}

TEST(AssembleActivities, MergesMigrationsAfterSorting) {
  const auto activities = assemble_activities(
      {
          migration("HtoD", "on-demand", 3000, 4000, 2),
          migration("HtoD", "on-demand", 1000, 2000, 1),
      },
      0);
  ASSERT_EQ(activities.size(), 1u);
  EXPECT_EQ(activities[0].bytes, 3u);
  EXPECT_EQ(activities[0].records, 2u);
  EXPECT_DOUBLE_EQ(activities[0].end, 3e-6);
  EXPECT_TRUE(assemble_activities({}, 0).empty());
}

TEST(AddTraceCounts, FaultsAndWhatTheTraceMissed) {
  Timeline with_faults;
  add_trace_counts(with_faults, {3, 7, 0, false});
  EXPECT_EQ(with_faults.unified_memory.cpu_page_faults, 3u);
  EXPECT_EQ(with_faults.unified_memory.gpu_page_faults, std::optional<std::uint64_t>(7));
  EXPECT_EQ(with_faults.unified_memory.note, "");

  Timeline on_demand;
  on_demand.unified_memory.note = "earlier note";
  Activity a;
  a.kind = ActivityKind::migration;
  a.cause = "on-demand";
  on_demand.activities.push_back(a);
  add_trace_counts(on_demand, {0, 0, 2, true});
  EXPECT_FALSE(on_demand.unified_memory.gpu_page_faults.has_value());
  EXPECT_EQ(on_demand.unified_memory.note,
            "earlier note; the driver delivered no GPU page-fault records; 2 activity records "
            "dropped or without timestamps; an activity buffer held a record CUPTI could not "
            "read; the rest was lost");

  Timeline quiet;  // no on-demand migrations: no fault records are expected
  add_trace_counts(quiet, {});
  EXPECT_EQ(quiet.unified_memory.note, "");

  TraceCounts sum{1, 2, 3, false};
  sum += TraceCounts{10, 20, 30, true};
  EXPECT_EQ(sum.cpu_page_faults, 11u);
  EXPECT_EQ(sum.gpu_page_faults, 22u);
  EXPECT_EQ(sum.lost, 33u);
  EXPECT_TRUE(sum.unreadable);
}

}  // namespace
}  // namespace gpulab::report
