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

// The reports in rank order; throws as by_rank does.
std::vector<const Report*> in_rank_order(std::vector<const Report*> out) {
  for (const Report* r : out)
    if (!r->program || !r->program->rank)
      throw UsageError(
          fmt::format("a report of '{}' says no rank: profile each rank with gpulab "
                      "profile under its launcher (torchrun, mpirun, srun)",
                      r->subject()));
  std::sort(out.begin(), out.end(), [](const Report* a, const Report* b) {
    return a->program->rank->rank < b->program->rank->rank;
  });
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i]->program->rank->rank == out[i - 1]->program->rank->rank)
      throw UsageError(fmt::format("two reports are rank {}: give each rank's report once",
                                   out[i]->program->rank->rank));
  return out;
}

// The view of reports already in rank order.
RankView view_of(const std::vector<const Report*>& ordered) {
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

}  // namespace

bool are_rank_reports(const std::vector<Report>& reports) {
  return reports.size() >= 2 && std::all_of(reports.begin(), reports.end(), [](const Report& r) {
           return r.program && r.program->rank;
         });
}

std::vector<const Report*> by_rank(const std::vector<Report>& reports) {
  std::vector<const Report*> all;
  for (const auto& r : reports) all.push_back(&r);
  return in_rank_order(std::move(all));
}

RankView rank_view(const std::vector<Report>& reports) { return view_of(by_rank(reports)); }

bool are_two_rank_sets(const std::vector<Report>& reports) {
  if (reports.size() < 4 || !are_rank_reports(reports)) return false;
  std::map<std::int64_t, int> seen;
  for (const auto& r : reports) ++seen[r.program->rank->rank];
  return std::all_of(seen.begin(), seen.end(), [](const auto& e) { return e.second == 2; });
}

RankComparison compare_rank_sets(const std::vector<Report>& reports) {
  const std::size_t half = reports.size() / 2;
  std::vector<const Report*> first, second;
  for (std::size_t i = 0; i < reports.size(); ++i)
    (i < half ? first : second).push_back(&reports[i]);
  const auto ranks_of = [](const std::vector<const Report*>& set) {
    std::vector<std::int64_t> ranks;
    for (const Report* r : set) ranks.push_back(r->program->rank->rank);
    std::sort(ranks.begin(), ranks.end());
    return ranks;
  };
  const auto a = ranks_of(first), b = ranks_of(second);
  if (!are_two_rank_sets(reports) || a != b || std::adjacent_find(a.begin(), a.end()) != a.end())
    throw UsageError(
        "comparing two runs of a job takes the first run's rank reports, then the second's, "
        "one report of each rank in each (a.0.json a.1.json b.0.json b.1.json)");
  return {view_of(in_rank_order(std::move(first))), view_of(in_rank_order(std::move(second)))};
}

}  // namespace gpulab::report
