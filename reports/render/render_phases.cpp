#include "reports/render/render_phases.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/render/table.hpp"
#include "reports/report.hpp"
#include "reports/units.hpp"

namespace gpulab::report {
namespace {

double total_of(const Report& r) {
  double total = 0;
  for (const auto& p : r.phases) total += p.seconds;
  return total;
}

const PhaseTime* phase_of(const Report& r, const std::string& phase) {
  for (const auto& p : r.phases)
    if (p.phase == phase) return &p;
  return nullptr;
}

}  // namespace

std::string phases_line(const Report& r) {
  if (r.phases.empty()) return "";
  std::string parts;
  for (const auto& p : r.phases)
    parts += fmt::format("{}{} {}", parts.empty() ? "" : " · ", p.phase, units::seconds(p.seconds));
  return fmt::format("where the time went: {} ({})\n", parts, units::seconds(total_of(r)));
}

std::string render_phase_table(const std::vector<Report>& reports, const Style& style) {
  std::vector<std::string> phases;
  for (const auto& r : reports)
    for (const auto& p : r.phases)
      if (std::find(phases.begin(), phases.end(), p.phase) == phases.end())
        phases.push_back(p.phase);
  if (phases.empty()) return "";
  std::vector<std::string> header{"lab"};
  header.insert(header.end(), phases.begin(), phases.end());
  header.push_back("total");
  TextTable table(header);
  std::vector<double> sums(phases.size() + 1, 0);
  for (const auto& r : reports) {
    if (r.phases.empty()) continue;
    std::vector<std::string> row{r.subject()};
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const PhaseTime* p = phase_of(r, phases[i]);
      if (p) sums[i] += p->seconds;
      row.push_back(p ? units::seconds(p->seconds) : "-");  // a phase the lab has not
    }
    sums.back() += total_of(r);
    row.push_back(units::seconds(total_of(r)));
    table.add_row(std::move(row));
  }
  std::vector<std::string> totals{"all"};
  for (double s : sums) totals.push_back(units::seconds(s));
  table.add_row(std::move(totals));
  const bool markdown = style.table == TableStyle::markdown;
  return "where the time went, per lab (wall time):\n" +
         (markdown ? table.render_markdown() : table.render());
}

}  // namespace gpulab::report
