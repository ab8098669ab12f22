// The JSON form of a variant's activity trace (docs/report-schema.md, "timeline").
#pragma once

#include <nlohmann/json.hpp>

#include "reports/json_reader.hpp"
#include "reports/timeline_model.hpp"

namespace gpulab::report {

// Writes the activities, the unified-memory counts, the derived summary (for readers of the
// file; gpulab derives it again when it loads the file) and the diagnosis, when there is one.
nlohmann::json timeline_json(const Timeline& timeline);

// Reads the activities, counts and diagnosis back and derives the summary again.
Timeline read_timeline(const Reader& r);

}  // namespace gpulab::report
