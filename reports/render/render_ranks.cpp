#include "reports/render/render_ranks.hpp"

#include <fmt/format.h>

#include "reports/kernel_name.hpp"
#include "reports/render/escape.hpp"
#include "reports/render/table.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

constexpr std::size_t kFunctionColumnWidth = 56;

std::string ranks_line(const RankView& view) {
  std::string out =
      fmt::format("job of {} ranks, by {}'s variables:", view.ranks.size(), view.launcher);
  for (std::size_t i = 0; i < view.ranks.size(); ++i)
    out += fmt::format("{} rank {}{}", i ? "," : "", view.ranks[i].rank,
                       view.ranks[i].host.empty() ? "" : " on " + view.ranks[i].host);
  return out;
}

std::vector<std::string> header(const RankView& view) {
  std::vector<std::string> h{"function"};
  for (const auto& k : view.ranks) h.push_back(fmt::format("rank {}", k.rank));
  h.push_back("slowest");
  h.push_back("spread");
  return h;
}

// The row's cells after its name: each rank's time ("-": never launched), the slowest rank and
// the spread ("1.08x").
std::vector<std::string> cells(const RankRow& row) {
  std::vector<std::string> out;
  for (const auto& s : row.seconds) out.push_back(s ? units::seconds(*s) : "-");
  out.push_back(std::to_string(row.slowest_rank));
  out.push_back(row.spread > 0 ? fmt::format("{:.2f}x", row.spread) : "-");
  return out;
}

std::vector<std::string> function_names(const RankView& view) {
  std::vector<std::string> names;
  for (const auto& row : view.functions) names.push_back(display_name(row.function));
  return shortened_apart(names, kFunctionColumnWidth);
}

}  // namespace

std::string render_rank_view(const RankView& view, const Style& style) {
  TextTable table(header(view));
  const auto add = [&](const std::string& name, const RankRow& row) {
    std::vector<std::string> r{shown(name, style)};
    for (auto& c : cells(row)) r.push_back(std::move(c));
    table.add_row(std::move(r));
  };
  add(view.program.function, view.program);
  const auto names = function_names(view);
  for (std::size_t i = 0; i < view.functions.size(); ++i) add(names[i], view.functions[i]);
  return shown(ranks_line(view), style) + "\n" + table.render() +
         "(GPU time per rank; spread: the slowest rank's over the median rank's)\n";
}

std::string rank_view_html(const RankView& view) {
  std::string out = fmt::format("<section class=\"ranks\">\n<h2>Ranks</h2>\n<p>{}</p>\n",
                                html_safe(ranks_line(view)));
  out += "<table>\n<tr>";
  const auto h = header(view);
  for (std::size_t i = 0; i < h.size(); ++i)
    out += fmt::format("<th{}>{}</th>", i ? " class=\"num\"" : "", html_safe(h[i]));
  out += "</tr>\n";
  const auto row_html = [&](const std::string& full, const std::string& name, const RankRow& row) {
    std::string r = fmt::format("<tr><td title=\"{}\">{}</td>", html_safe(full), html_safe(name));
    for (const auto& c : cells(row)) r += fmt::format("<td class=\"num\">{}</td>", html_safe(c));
    return r + "</tr>\n";
  };
  out += row_html(view.program.function, view.program.function, view.program);
  const auto names = function_names(view);
  for (std::size_t i = 0; i < view.functions.size(); ++i)
    out += row_html(view.functions[i].function, names[i], view.functions[i]);
  return out +
         "</table>\n<p class=\"small\">GPU time per rank; spread: the slowest rank's over the "
         "median rank's.</p>\n</section>\n";
}

}  // namespace gpulab::report
