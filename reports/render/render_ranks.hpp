// A job's ranks side by side (reports/rank_view.hpp): as text, and as a section of the HTML page.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/rank_view.hpp"
#include "reports/render/style.hpp"

namespace gpulab::report {

// "job of 2 ranks, by torchrun's variables: rank 0 on node7, rank 1 on node7", then the table:
// the program's kernel time and each function's, per rank, with the slowest rank and the spread.
std::string render_rank_view(const RankView& view, const Style& style);

// The same table as an HTML <section>.
std::string rank_view_html(const RankView& view);

// Two runs of a job, rank by rank: the ranks line, then per function (the second run's heaviest
// first, then those only the first ran) each rank's time in both runs and the change.
std::string render_rank_comparison(const RankComparison& c, const Style& style);
nlohmann::json rank_comparison_json(const RankComparison& c);

}  // namespace gpulab::report
