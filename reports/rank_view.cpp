#include "reports/rank_view.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "reports/base/errors.hpp"
#include "reports/report.hpp"

namespace gpulab::report {
namespace {

// The slowest rank and the spread of one row, over the ranks that ran it.
void settle(RankRow& row, const std::vector<RankColumn>& ranks) {
  std::vector<double> ran;
  double slowest = -1;
  for (std::size_t i = 0; i < row.seconds.size(); ++i) {
    if (!row.seconds[i]) continue;
    ran.push_back(*row.seconds[i]);
    if (*row.seconds[i] > slowest) {
      slowest = *row.seconds[i];
      row.slowest_rank = ranks[i].rank;
    }
  }
  if (ran.empty()) return;
  std::sort(ran.begin(), ran.end());
  const std::size_t n = ran.size();
  const double median = n % 2 ? ran[n / 2] : (ran[n / 2 - 1] + ran[n / 2]) / 2;
  row.spread = median > 0 ? slowest / median : 0;
}

}  // namespace

bool are_rank_reports(const std::vector<Report>& reports) {
  return reports.size() >= 2 && std::all_of(reports.begin(), reports.end(), [](const Report& r) {
           return r.program && r.program->rank;
         });
}

std::vector<const Report*> by_rank(const std::vector<Report>& reports) {
  std::vector<const Report*> out;
  for (const auto& r : reports) {
    if (!r.program || !r.program->rank)
      throw UsageError(
          fmt::format("a report of '{}' says no rank: profile each rank with gpulab "
                      "profile under its launcher (torchrun, mpirun, srun)",
                      r.subject()));
    out.push_back(&r);
  }
  std::sort(out.begin(), out.end(), [](const Report* a, const Report* b) {
    return a->program->rank->rank < b->program->rank->rank;
  });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i]->program->rank->rank == out[i - 1]->program->rank->rank)
      throw UsageError(fmt::format("two reports are rank {}: give each rank's report once",
                                   out[i]->program->rank->rank));
  return out;
}

RankView rank_view(const std::vector<Report>& reports) {
  const auto ordered = by_rank(reports);
  RankView view;
  view.launcher = ordered.front()->program->rank->launcher;
  for (const Report* r : ordered)
    view.ranks.push_back({r->program->rank->rank, r->program->rank->host});

  view.program.function = "(every kernel)";
  std::map<std::string, RankRow> rows;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const Report& r = *ordered[i];
    view.program.seconds.push_back(r.program->kernel_seconds);
    for (const auto& v : r.variants) {
      if (!v.totals || v.totals->timed_launches == 0) continue;
      RankRow& row = rows[v.description];
      row.function = v.description;
      row.seconds.resize(ordered.size());
      row.seconds[i] = row.seconds[i].value_or(0) + v.totals->total_seconds;
    }
  }
  settle(view.program, view.ranks);
  for (auto& entry : rows) {
    settle(entry.second, view.ranks);
    view.functions.push_back(std::move(entry.second));
  }
  const auto summed = [](const RankRow& row) {
    return std::accumulate(row.seconds.begin(), row.seconds.end(), 0.0,
                           [](double sum, const auto& s) { return sum + s.value_or(0); });
  };
  std::stable_sort(view.functions.begin(), view.functions.end(),
                   [&](const RankRow& a, const RankRow& b) { return summed(a) > summed(b); });
  return view;
}

}  // namespace gpulab::report
