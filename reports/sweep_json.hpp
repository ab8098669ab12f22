// A sweep's JSON form, schema gpulab.sweep/1 (docs/report-schema.md): the axes, then one entry
// per point, its values and its whole lab report (gpulab.report/4).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/sweep.hpp"

namespace gpulab::report {

nlohmann::json to_json(const Sweep& sweep);

// to_json with a 2-space indent and a final newline.
std::string sweep_file_text(const Sweep& sweep);

// Whether a JSON document (reports/report_json.hpp, read_json_file) is a sweep.
bool is_sweep(const nlohmann::json& doc);

// Validates as it reads, as a report is read: a missing or mistyped field, a point whose values
// are not one for each axis, or a point's report that is not a valid report throws
// UsageError("'PATH': <where>: <problem>"), e.g. "points[2].report.variants[0].timing.median:
// expected a number".
Sweep sweep_from_document(const nlohmann::json& doc, const std::string& path);

}  // namespace gpulab::report
