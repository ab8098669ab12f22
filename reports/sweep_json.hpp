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

}  // namespace gpulab::report
