// The JSON form of a kernel's `source` section (docs/report-schema.md, "source").
#pragma once

#include <nlohmann/json.hpp>

#include "reports/json_reader.hpp"
#include "reports/source_model.hpp"

namespace gpulab::report {

// The line table once (each distinct source line), the instructions pointing into it, and the
// files' texts when they were embedded.
nlohmann::json source_json(const KernelSource& source);

// Reads it back, checking that every instruction's line is one of the table's.
KernelSource read_source(const Reader& r);

}  // namespace gpulab::report
