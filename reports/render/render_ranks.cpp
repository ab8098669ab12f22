#include "reports/render/render_ranks.hpp"

#include <map>
#include <optional>

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

namespace {

// A function's row in both runs; an empty row stands where a run did not launch it.
struct RowPair {
  std::string function;
  RankRow before, after;
};

std::vector<RowPair> row_pairs(const RankComparison& c) {
  std::vector<RowPair> out{{c.after.program.function, c.before.program, c.after.program}};
  std::map<std::string, std::size_t> at;
  for (const auto& row : c.after.functions) {
    at[row.function] = out.size();
    out.push_back({row.function, RankRow{}, row});
  }
  for (const auto& row : c.before.functions) {
    const auto found = at.find(row.function);
    if (found != at.end())
      out[found->second].before = row;
    else
      out.push_back({row.function, row, RankRow{}});
  }
  return out;
}

std::optional<double> seconds_at(const RankRow& row, std::size_t rank) {
  return rank < row.seconds.size() ? row.seconds[rank] : std::nullopt;
}

// "1.97 ms → 1.80 ms (-8.6%)"; "-" for a run that did not launch it.
std::string change_cell(const std::optional<double>& a, const std::optional<double>& b) {
  std::string out =
      fmt::format("{} → {}", a ? units::seconds(*a) : "-", b ? units::seconds(*b) : "-");
  if (a && b && *a > 0) out += fmt::format(" ({:+.1f}%)", (*b / *a - 1) * 100);
  return out;
}

}  // namespace

std::string render_rank_comparison(const RankComparison& c, const Style& style) {
  std::vector<std::string> h{"function"};
  for (const auto& k : c.after.ranks) h.push_back(fmt::format("rank {}", k.rank));
  TextTable table(h);
  const auto pairs = row_pairs(c);
  std::vector<std::string> names;
  for (std::size_t i = 1; i < pairs.size(); ++i) names.push_back(display_name(pairs[i].function));
  names = shortened_apart(names, kFunctionColumnWidth);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    std::vector<std::string> r{shown(i == 0 ? pairs[i].function : names[i - 1], style)};
    for (std::size_t k = 0; k < c.after.ranks.size(); ++k)
      r.push_back(change_cell(seconds_at(pairs[i].before, k), seconds_at(pairs[i].after, k)));
    table.add_row(std::move(r));
  }
  const bool markdown = style.table == TableStyle::markdown;
  return shown(ranks_line(c.after), style) + ", two runs\n" + (markdown ? "\n" : "") +
         (markdown ? table.render_markdown() : table.render()) +
         "(GPU time per rank, the first run's → the second's)\n";
}

nlohmann::json rank_comparison_json(const RankComparison& c) {
  using nlohmann::json;
  const auto times = [](const RankRow& row, std::size_t ranks) {
    json out = json::array();
    for (std::size_t k = 0; k < ranks; ++k) {
      const auto s = seconds_at(row, k);
      out.push_back(s ? json(*s) : json());
    }
    return out;
  };
  const std::size_t n = c.after.ranks.size();
  json ranks = json::array();
  for (const auto& k : c.after.ranks) ranks.push_back({{"rank", k.rank}, {"host", k.host}});
  json functions = json::array();
  for (const auto& p : row_pairs(c))
    functions.push_back({{"function", p.function},
                         {"first_seconds", times(p.before, n)},
                         {"second_seconds", times(p.after, n)}});
  return {{"launcher", c.after.launcher},
          {"ranks", std::move(ranks)},
          {"functions", std::move(functions)}};
}

}  // namespace gpulab::report
