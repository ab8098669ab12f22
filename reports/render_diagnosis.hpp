// The diagnosis as text: per kernel, the path walked through the decision tree with the
// measured value at each node, then the findings, principal first.
#pragma once

#include <string>

#include "reports/report.hpp"
#include "reports/style.hpp"

namespace gpulab::report {

// Every diagnosed kernel of the report (or of one variant / kernel when given).
// In Markdown, the tree goes into a code block and the findings into a list.
std::string render_diagnosis(const Report& report, const std::string& variant = "",
                             const std::string& kernel = "", const Style& style = {});

}  // namespace gpulab::report
