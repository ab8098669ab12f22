#include "reports/sweep_json.hpp"

#include "reports/base/errors.hpp"
#include "reports/json_reader.hpp"
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

bool is_sweep(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("schema") && doc["schema"] == kSweepSchema;
}

namespace {

Sweep read_sweep(const Reader& root) {
  Sweep sweep;
  if (root.str("schema") != kSweepSchema)
    Reader::fail("schema", "'" + root.str("schema") + "' is not " + kSweepSchema);
  if (root.has("tool")) {
    const auto t = root.at("tool");
    sweep.tool = {t.str_or("name", "gpulab"), t.str_or("version", ""), t.str_or("git_sha", "")};
  }
  if (root.has("argv"))
    root.each("argv", [&](const Reader& a) { sweep.argv.push_back(a.as_string()); });
  sweep.created_utc = root.str_or("created_utc", "");
  sweep.lab = root.str("lab");
  sweep.zip = root.boolean_or("zip", false);
  root.each("axes", [&](const Reader& a) {
    SweepAxisValues axis{a.str("name"), {}};
    a.each("values", [&](const Reader& v) { axis.values.push_back(v.as_integer()); });
    if (axis.values.empty()) Reader::fail(a.where() + ".values", "an axis needs a value");
    sweep.axes.push_back(std::move(axis));
  });
  if (sweep.axes.empty()) Reader::fail("axes", "a sweep needs an axis");
  root.each("points", [&](const Reader& p) {
    SweepPointReport point;
    for (const auto& axis : sweep.axes) point.at[axis.name] = p.at("at").integer(axis.name);
    if (p.at("at").node().size() != sweep.axes.size())
      Reader::fail(p.where() + ".at", "expected a value for each axis, and nothing else");
    try {
      point.report = from_json(p.at("report").node());
    } catch (const UsageError& e) {
      throw UsageError(p.where() + ".report." + e.what());
    }
    if (point.report.lab.name != sweep.lab)
      Reader::fail(p.where() + ".report.lab.name",
                   "'" + point.report.lab.name + "' in a sweep of lab '" + sweep.lab + "'");
    sweep.points.push_back(std::move(point));
  });
  return sweep;
}

}  // namespace

Sweep sweep_from_document(const nlohmann::json& doc, const std::string& path) {
  try {
    if (!doc.is_object()) Reader::fail("sweep", "expected a JSON object");
    return read_sweep(Reader(doc, ""));
  } catch (const UsageError& e) {
    throw UsageError("'" + path + "': " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("'" + path + "': malformed sweep: " + e.what());
  }
}

}  // namespace gpulab::report
