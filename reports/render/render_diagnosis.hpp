// The diagnosis as text: for a program, its principal finding first; per variant, its principal
// finding and the kernels too small to diagnose in a line; then per kernel function (its longest
// diagnosed launch) the path walked through the decision tree with the measured value at each
// node, and the findings, principal first (Style::max_findings of them).
#pragma once

#include <string>

#include "reports/diagnosis_model.hpp"
#include "reports/render/style.hpp"
#include "reports/report_fwd.hpp"

namespace gpulab::report {

// Every diagnosed kernel of the report. In Markdown, the tree goes into a code block and the
// findings into a list.
std::string render_diagnosis(const Report& report, const Style& style = {});

// Measured values against their thresholds, as the tree prints them at each node:
// "dram_pct = 33.8% (threshold >= 60.0%), ...".
std::string evidence_text(const std::vector<Evidence>& evidence, const Style& style = {});

// What fixing a finding is worth, in words: "est. 1.9× faster if fixed (its work's bytes at the
// measured copy roof)".
std::string estimate_text(const Estimate& estimate);

}  // namespace gpulab::report
