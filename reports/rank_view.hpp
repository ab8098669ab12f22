// The reports of a job's ranks side by side (`gpulab report` of several rank reports): per
// kernel function, each rank's GPU time, the slowest rank and the spread between the ranks, as
// HTA's and nsys's multi-report views show them. The ranks' reports say which rank each is
// (ProgramInfo::rank, app/job_rank.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/report_fwd.hpp"

namespace gpulab::report {

struct RankColumn {
  std::int64_t rank = 0;
  std::string host;
};

struct RankRow {
  std::string function;  // demangled; "(every kernel)" for the row of the whole program
  std::vector<std::optional<double>> seconds;  // per column: its GPU time; none: not launched
  std::int64_t slowest_rank = 0;
  double spread = 0;  // the slowest rank's time / the median rank's, over the ranks that ran it
};

struct RankView {
  std::string launcher;
  std::vector<RankColumn> ranks;   // by rank
  RankRow program;                 // every timed launch of each rank
  std::vector<RankRow> functions;  // the heaviest (summed over the ranks) first
};

// Whether `reports` are two or more reports of one job's ranks.
bool are_rank_reports(const std::vector<Report>& reports);

// The reports in rank order. Throws UsageError when a report is not a rank's, or two are the
// same rank.
std::vector<const Report*> by_rank(const std::vector<Report>& reports);

// Throws as by_rank does.
RankView rank_view(const std::vector<Report>& reports);

// Two runs of one job, rank by rank (`gpulab compare` of two sets of rank reports): each set's
// view; a function is matched across them by its name.
struct RankComparison {
  RankView before, after;
};

// Whether `reports` are two runs of one job: four or more rank reports, each rank twice.
bool are_two_rank_sets(const std::vector<Report>& reports);

// The two sets of `reports`, the first half then the second, each one report of every rank of
// the same ranks. Throws UsageError naming what does not fit.
RankComparison compare_rank_sets(const std::vector<Report>& reports);

}  // namespace gpulab::report
