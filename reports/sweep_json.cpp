#include "reports/sweep_json.hpp"

#include "reports/report_json.hpp"
#include "reports/sweep_findings.hpp"

namespace gpulab::report {

nlohmann::json to_json(const Sweep& sweep) {
  using nlohmann::json;
  json axes = json::array();
  for (const auto& a : sweep.axes) axes.push_back({{"name", a.name}, {"values", a.values}});
  json points = json::array();
  for (const auto& p : sweep.points)
    points.push_back({{"at", p.at}, {"report", to_json(p.report)}});
  // Derived when written, as a report's principal findings are; not read back.
  json changes = json::array();
  for (const auto& c : finding_courses(sweep))
    if (c.changes()) changes.push_back(describe(c));
  return {{"schema", kSweepSchema},
          {"tool",
           {{"name", sweep.tool.name},
            {"version", sweep.tool.version},
            {"git_sha", sweep.tool.git_sha}}},
          {"argv", sweep.argv},
          {"created_utc", sweep.created_utc},
          {"lab", sweep.lab},
          {"axes", std::move(axes)},
          {"zip", sweep.zip},
          {"finding_changes", std::move(changes)},
          {"points", std::move(points)}};
}

std::string sweep_file_text(const Sweep& sweep) { return to_json(sweep).dump(2) + "\n"; }

}  // namespace gpulab::report
