// The report's JSON form (docs/report-schema.md): writing, and reading back with validation.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reports/device_info.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const DeviceInfo& device);

// Validates as it reads: a wrong schema version, a missing required field or a value of the
// wrong type throws UsageError("<where>: <problem>"), e.g. "variants[1].timing.median: expected
// a number". Optional fields may be absent; metrics that are null are "not measured".
Report from_json(const nlohmann::json& json);

// from_json on a file; errors name the file. Rejects truncated or malformed JSON, numbers out
// of range, and files past kMaxInputBytes or JsonLimits (reports/base/input_file.hpp), all as
// UsageError (exit 2).
Report load_report(const std::string& path);

// load_report in two steps, for a command that reads reports and other documents (sweeps): the
// file's JSON, checked as load_report checks it; then the report it holds, errors naming `path`.
nlohmann::json read_json_file(const std::string& path);
Report report_from_document(const nlohmann::json& doc, const std::string& path);

// The text of a report file: to_json with a 2-space indent (a program's report: on one line) and a
// final newline.
std::string report_file_text(const Report& report);

// Writes report_file_text to `path` through write_output (reports/base/output_file.hpp); "-" is the
// process's standard output.
void save_report(const std::string& path, const Report& report);

}  // namespace gpulab::report
