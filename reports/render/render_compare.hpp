// Comparisons as text, Markdown (for pull requests) and JSON (`gpulab.compare/1`).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/diagnosis/compare.hpp"
#include "reports/render/style.hpp"

namespace gpulab::report {

inline constexpr const char* kCompareSchema = "gpulab.compare/1";

// Two inputs: a variant table (medians, change, noise band, verdict), then per kernel the
// metric deltas, then the findings resolved and introduced.
std::string render_comparison(const Comparison& c, const Style& style);

// Three or more inputs: one row per variant, one column per input (the first is the baseline),
// each with its median, speedup over the baseline and verdict.
std::string render_comparison_table(const std::vector<Comparison>& against_first,
                                    const Style& style);

nlohmann::json comparison_json(const std::vector<Comparison>& against_first);

}  // namespace gpulab::report
